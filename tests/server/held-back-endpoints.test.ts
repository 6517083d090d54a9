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
  // A claim is a round trip on a real store: it yields, and what the round gives back is counted.
  const [claimDue, release] = [deps.deliveryQueue.claimDue.bind(deps.deliveryQueue), deps.deliveryQueue.release];
  let givenBack = 0;
  deps.deliveryQueue.claimDue = async (request) => {
    await new Promise((resolve) => setImmediate(resolve));
    return claimDue(request);
  };
  deps.deliveryQueue.release = async (deliveries) => {
    givenBack += deliveries.length;
    return release.call(deps.deliveryQueue, deliveries);
  };
  const policy = { ...POLICY, maxInFlight: 8, maxInFlightPerEndpoint: 2, scheduleMs: [60_000], leaseMs: 600_000 };
  const round = deliverDueEvents(deps, policy, quiet());
  await until(() => healthyDelivered === 8);
  assert.is(givenBack, 16, "each silent endpoint's excess given back once, when first found failing");
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

test('what a claim keeps goes out while the excess it found is still being given back', async () => {
  const deps = fakeDeps();
  const silent = await brandWithEndpoint(deps, 'silent');
  await failing(deps, silent.id);
  for (let i = 0; i < 4; i++) await createJob(deps, { brandAccountId: silent.id });
  const healthy = await brandWithEndpoint(deps, 'healthy');
  for (let i = 0; i < 4; i++) await createJob(deps, { brandAccountId: healthy.id });
  let delivered = 0;
  deps.webhookSender.send = async (request) => {
    if (new URL(request.url).host.startsWith('healthy')) delivered++;
    return answered(request, deps.clock.now(), 200, 1);
  };
  const release = deps.deliveryQueue.release.bind(deps.deliveryQueue);
  const givingBack: (() => void)[] = [];
  deps.deliveryQueue.release = async (deliveries) => {
    await new Promise<void>((resolve) => givingBack.push(resolve));
    return release(deliveries);
  };
  const policy = { ...POLICY, maxInFlight: 8, maxInFlightPerEndpoint: 2, scheduleMs: [60_000], leaseMs: 600_000 };
  // No poll and no wake-up: only the give-back's own return can have what went back claimed again.
  let ended = false;
  const round = deliverDueEvents(deps, policy, quiet({ waitForWork: () => new Promise(() => {}) })).then(() => {
    ended = true;
  });
  await until(() => delivered === 4 && givingBack.length > 0, 2000);
  assert.is(givingBack.length, 1, "the failing endpoint's excess is being given back");
  assert.is(delivered, 4, 'the healthy endpoint was sent to meanwhile');
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.not.ok(ended, 'the round does not end while a give-back is under way');
  while (givingBack.length > 0) {
    for (const resolve of givingBack.splice(0)) resolve();
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await round;
  assert.is(delivered, 4);
  const log = await deps.deliveryLog.list({ limit: 100 });
  assert.is(log.filter((d) => d.status === 'delivered').length, 8, 'everything sent once given back');
});

for (const [bad, badAnswer] of [
  ['time out', { statusCode: null, durationMs: 1000 }],
  ['answer 200 slowly', { statusCode: 200, durationMs: 600 }],
] as const) {
  test(`an endpoint whose attempts ${bad} is held back, whatever claims read, to a 2xx in time`, async () => {
    const deps = fakeDeps();
    const brand = await brandWithEndpoint(deps, 'flaky');
    for (let i = 0; i < 12; i++) await createJob(deps, { brandAccountId: brand.id });
    let [open, sent] = [0, 0];
    const openAtStart: number[] = [];
    deps.webhookSender.send = async (request) => {
      const nth = ++sent;
      openAtStart.push(++open);
      const at = deps.clock.now();
      // The first five are bad (slowMs is 500); the rest answer 200 at once.
      await new Promise((resolve) => setTimeout(resolve, nth <= 5 ? 20 : 2));
      if (nth <= 5) deps.clock.advance(1); // claims after it are dated after its end
      open--;
      return nth <= 5
        ? answered(request, at, badAnswer.statusCode, badAnswer.durationMs)
        : answered(request, at, 200, 1);
    };
    const standing: boolean[] = [];
    const endpoints = new HeldBackEndpoints(POLICY.slowMs, (_delivery, heldBack) => standing.push(heldBack));
    const policy = { ...POLICY, maxInFlight: 4, maxInFlightPerEndpoint: 2, scheduleMs: [60_000], leaseMs: 600_000 };
    await deliverDueEvents(deps, policy, quiet(), endpoints);
    assert.is(sent, 12);
    assert.equal(
      openAtStart.slice(0, 6),
      [1, 2, 1, 1, 1, 1],
      'two at once, then one at a time to the first 2xx in time',
    );
    assert.is(Math.max(...openAtStart.slice(6)), 2, 'after its 2xx in time, two at once again');
    assert.equal(standing, [true, false], 'held back once, then given its share back, each told once');
  });
}

test('held back by its own attempts to its own 2xx in time, by claims while failing since its last one', () => {
  const told: string[] = [];
  const endpoints = new HeldBackEndpoints(500, (endpoint, heldBack) => told.push(`${endpoint.id} ${heldBack}`));
  const delivery = (endpointId: string, failingSince: number | null, enabled = true) =>
    ({
      endpointId,
      endpoint: {
        url: 'https://e.example.com',
        enabled,
        failingSince: failingSince === null ? null : new Date(failingSince),
      },
    }) as never;
  const attempt = (at: number, statusCode: number | null, durationMs: number) => ({
    at: new Date(at),
    statusCode,
    durationMs,
  });
  const t = Date.parse('2026-11-30T12:00:00Z');
  endpoints.claimed(delivery('e', t), t);
  assert.ok(endpoints.isHeldBack('e'), 'failing when claimed');
  endpoints.attempted(delivery('e', t), attempt(t + 10, 204, 5));
  assert.not.ok(endpoints.isHeldBack('e'), 'a 2xx in time since it began failing');
  endpoints.claimed(delivery('e', t), t + 20);
  assert.not.ok(endpoints.isHeldBack('e'), 'a claim that read it before that 2xx was recorded');
  endpoints.claimed(delivery('e', t + 15), t + 25);
  assert.ok(endpoints.isHeldBack('e'), 'failing again since, as another process found');
  endpoints.claimed(delivery('e', null), t + 26);
  assert.not.ok(endpoints.isHeldBack('e'), 'a claim reading it healthy ends what a claim found');
  endpoints.attempted(delivery('e', null), attempt(t + 30, 200, 1));
  endpoints.attempted(delivery('e', null), attempt(t + 40, 200, 500));
  assert.ok(endpoints.isHeldBack('e'), 'a 2xx as slow as slowMs');
  endpoints.claimed(delivery('e', null), t + 600);
  assert.ok(endpoints.isHeldBack('e'), 'a claim reading it healthy does not end what this process saw');
  endpoints.attempted(delivery('e', null), attempt(t + 700, 500, 1));
  assert.ok(endpoints.isHeldBack('e'), 'a quick 500');
  endpoints.claimed(delivery('e', t + 650, false), t + 800);
  assert.not.ok(endpoints.isHeldBack('e'), 'disabled: no claim hands out its deliveries');
  endpoints.claimed(delivery('e', t + 900), t + 900);
  endpoints.attempted(delivery('other', null), attempt(t + 901 + 10 * 60_000, 200, 1));
  assert.not.ok(endpoints.isHeldBack('e'), 'forgotten ten minutes after its last news');
  assert.equal([...endpoints.heldBack()], []);
  assert.equal(told, ['e true', 'e false', 'e true', 'e false', 'e true', 'e false', 'e true', 'e false']);
});

test('held-back endpoints take turns round after round: one with a delivery due is sent, first or not', async () => {
  const deps = fakeDeps();
  const endpoints = new HeldBackEndpoints(POLICY.slowMs);
  const brands = [];
  for (const name of ['idle0', 'idle1', 'idle2', 'due']) brands.push(await brandWithEndpoint(deps, name));
  for (const brand of brands) {
    await failing(deps, brand.id);
    const config = await deps.webhookConfigs.find(brand.id, 'brand');
    // What earlier claims taught this process, in this order: three failing endpoints with nothing due come first.
    endpoints.claimed(
      {
        endpointId: config!.id,
        endpoint: { url: config!.url, enabled: true, failingSince: deps.clock.now() },
      } as never,
      deps.clock.now().getTime(),
    );
  }
  await createJob(deps, { brandAccountId: brands[3]!.id });
  let sent = 0;
  deps.webhookSender.send = async (request) => {
    sent++;
    return answered(request, deps.clock.now(), 200, 1);
  };
  // Two sends: one for held-back endpoints, and room for one of them in the buffer's two places a claim.
  const policy = { ...POLICY, maxInFlight: 2, maxInFlightPerEndpoint: 2 };
  let rounds = 0;
  while (sent === 0 && rounds < 8) {
    rounds++;
    await deliverDueEvents(deps, policy, quiet(), endpoints);
  }
  assert.is(sent, 1);
  assert.is(rounds, 4, "each round's claim gave the next endpoint its turn");
});

test.run();
