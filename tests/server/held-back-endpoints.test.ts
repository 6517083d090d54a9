import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { SentAttempt } from '../../domain/delivery.ts';
import type { WebhookRequest } from '../../domain/ports.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { deliverDueEvents } from '../../server/worker/delivery-round.ts';
import { HeldBackEndpoints } from '../../server/worker/held-back-endpoints.ts';
import { type FakeDeps, fakeDeps } from '../fakes.ts';
import { answered, brandWithEndpoint, POLICY, quiet } from './delivery-round-support.ts';

// The circuit breaker of the delivery round (CONTRACT §7, no endpoint slows another): endpoints held back to one send
// at a time, and half the sends at most for all of them, however many hang.
const test = suite('held-back endpoints');

/** Sends under way by host, and the most there ever were, for all hosts named `silent…` too. */
class OpenSends {
  private readonly open = new Map<string, number>();
  readonly most = new Map<string, number>();
  silentNow = 0;
  silentMost = 0;
  begin(host: string) {
    const n = (this.open.get(host) ?? 0) + 1;
    this.open.set(host, n);
    this.most.set(host, Math.max(this.most.get(host) ?? 0, n));
    if (host.startsWith('silent')) this.silentMost = Math.max(this.silentMost, ++this.silentNow);
  }
  end(host: string) {
    this.open.set(host, this.open.get(host)! - 1);
    if (host.startsWith('silent')) this.silentNow--;
  }
}

async function failing(deps: FakeDeps, accountId: string) {
  const config = await deps.webhookConfigs.find(accountId, 'brand');
  deps.webhookConfigs.setHealth(config!.id, {
    failingSince: deps.clock.now(),
    enabled: true,
    disabledReason: null,
    failureMailedAt: null,
  });
}

const until = async (done: () => boolean, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 2));
};

test('endpoints failing when claimed hold a send each and half the sends together; others get the rest', async () => {
  const deps = fakeDeps();
  // Six silent endpoints that have failed before (§11), their backlogs older than the healthy endpoint's deliveries.
  const silent = [];
  for (let n = 0; n < 6; n++) silent.push(await brandWithEndpoint(deps, `silent${n}`));
  for (const brand of silent) {
    await failing(deps, brand.id);
    for (let i = 0; i < 4; i++) await createJob(deps, { brandAccountId: brand.id });
  }
  const healthy = await brandWithEndpoint(deps, 'healthy');
  for (let i = 0; i < 8; i++) await createJob(deps, { brandAccountId: healthy.id });
  const open = new OpenSends();
  const hanging: (() => void)[] = [];
  let healthyDelivered = 0;
  deps.webhookSender.send = async (request: WebhookRequest): Promise<SentAttempt> => {
    const host = new URL(request.url).host;
    open.begin(host);
    if (host.startsWith('silent')) await new Promise<void>((resolve) => hanging.push(resolve));
    else await new Promise((resolve) => setTimeout(resolve, 1));
    open.end(host);
    if (host.startsWith('healthy')) healthyDelivered++;
    return answered(request, deps.clock.now(), host.startsWith('silent') ? null : 200, 1);
  };
  const policy = { ...POLICY, maxInFlight: 8, maxInFlightPerEndpoint: 2, scheduleMs: [60_000], leaseMs: 600_000 };
  const round = deliverDueEvents(deps, policy, quiet());
  await until(() => healthyDelivered === 8);
  assert.is(healthyDelivered, 8, "the healthy endpoint's deliveries were all sent while the silent ones hang");
  assert.is(open.silentMost, 4, 'the silent endpoints held four sends (half of eight), no more');
  for (let n = 0; n < 6; n++) assert.ok((open.most.get(`silent${n}.example.com`) ?? 0) <= 1, `silent${n}: one send`);
  assert.is(open.most.get('healthy.example.com'), 2, 'the healthy endpoint had its whole share');
  while (hanging.length > 0 || open.silentNow > 0) {
    for (const resolve of hanging.splice(0)) resolve();
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await round;
  const log = await deps.deliveryLog.list({ limit: 100 });
  assert.is(log.filter((d) => d.status === 'pending' && d.attempts.length === 1).length, 24, 'each silent one tried');
});

test('an endpoint whose attempts time out is held back from then on, and has its share again after a 2xx', async () => {
  const deps = fakeDeps();
  const brand = await brandWithEndpoint(deps, 'flaky');
  for (let i = 0; i < 12; i++) await createJob(deps, { brandAccountId: brand.id });
  const open = new OpenSends();
  const concurrency: number[] = [];
  const standing: boolean[] = [];
  let sent = 0;
  deps.webhookSender.send = async (request) => {
    const nth = ++sent;
    const host = new URL(request.url).host;
    open.begin(host);
    concurrency.push(open.most.get(host)!);
    open.most.set(host, 0);
    const at = deps.clock.now();
    // The first two time out (as long as slowMs and more); the rest answer 200 at once.
    await new Promise((resolve) => setTimeout(resolve, nth <= 2 ? 20 : 2));
    if (nth <= 2) deps.clock.advance(1);
    open.end(host);
    return nth <= 2 ? answered(request, at, null, 1000) : answered(request, at, 200, 1);
  };
  const policy = { ...POLICY, maxInFlight: 4, maxInFlightPerEndpoint: 2, scheduleMs: [60_000], leaseMs: 600_000 };
  await deliverDueEvents(deps, policy, quiet({ heldBack: (_delivery, heldBack) => standing.push(heldBack) }));
  assert.is(sent, 12);
  assert.equal(concurrency.slice(0, 2), [1, 2], 'two sends at once at first');
  assert.is(concurrency[2], 1, 'after the timeouts, the next send went alone');
  assert.is(Math.max(...concurrency.slice(3)), 2, 'after its 2xx, two at once again');
  assert.equal(standing, [true, false], 'held back once, then given its share back, each said once');
});

test('what a claim read is overridden by a newer attempt, and forgotten ten minutes after its last news', () => {
  const endpoints = new HeldBackEndpoints(500);
  const claimed = (failingSince: Date | null) =>
    ({ endpointId: 'e', endpoint: { url: 'https://e.example.com', enabled: true, failingSince } }) as never;
  const t = Date.parse('2026-11-30T12:00:00Z');
  endpoints.claimed(claimed(new Date(t)), t);
  assert.ok(endpoints.isHeldBack('e'), 'failing when claimed');
  assert.ok(endpoints.attempted('e', { at: new Date(t + 10), statusCode: 204, durationMs: 5 }), 'a change');
  assert.not.ok(endpoints.isHeldBack('e'), 'a 2xx in time');
  endpoints.claimed(claimed(new Date(t)), t + 1);
  assert.not.ok(endpoints.isHeldBack('e'), 'a claim read before the 2xx says less than it');
  endpoints.attempted('e', { at: new Date(t + 20), statusCode: 200, durationMs: 500 });
  assert.ok(endpoints.isHeldBack('e'), 'a 2xx as slow as slowMs holds it back');
  endpoints.attempted('e', { at: new Date(t + 600), statusCode: 500, durationMs: 1 });
  assert.ok(endpoints.isHeldBack('e'), 'a quick 500 too');
  endpoints.attempted('other', { at: new Date(t + 601 + 10 * 60_000), statusCode: 200, durationMs: 1 });
  assert.not.ok(endpoints.isHeldBack('e'), 'forgotten after ten minutes without news');
  assert.equal([...endpoints.heldBack()], []);
});

test.run();
