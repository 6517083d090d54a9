import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { SentAttempt } from '../../domain/delivery.ts';
import { DomainError } from '../../domain/errors.ts';
import type { WebhookRequest } from '../../domain/ports.ts';
import { eventFor, receiverOf } from '../../domain/receivers.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createContact } from '../../domain/use-cases/create-contact.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { deliverDueEvents } from '../../server/worker/delivery-round.ts';
import { fakeDeps, ScriptedWebhookSender } from '../fakes.ts';
import { brandWithEndpoint, POLICY, quiet } from './delivery-round-support.ts';

// The worker's delivery round on the fakes: its schedule of claims, sends and records, its share per endpoint, and what
// it reports.
const test = suite('the delivery round');
test('after the database failed, a round pauses for its backoff: a wake-up does not cut it short', async () => {
  const deps = fakeDeps();
  const claimDue = deps.deliveryQueue.claimDue.bind(deps.deliveryQueue);
  let claims = 0;
  deps.deliveryQueue.claimDue = async (...args) => {
    if (++claims === 1) throw new DomainError('UNAVAILABLE', 'the database is away');
    return claimDue(...args);
  };
  const waits: string[] = [];
  const failed: string[] = [];
  await deliverDueEvents(
    deps,
    POLICY,
    quiet({
      // A wake-up pending all along: a wait for work ends at once, and the backoff would be skipped if it were one.
      waitForWork: async (ms) => {
        waits.push(`work ${ms}`);
      },
      pause: async (ms) => {
        waits.push(`pause ${ms}; claims so far ${claims}`);
      },
      stepFailed: (step) => {
        failed.push(step);
      },
    }),
  );
  assert.equal(failed, ['claim']);
  assert.equal(waits, ['pause 1000; claims so far 1'], 'the backoff is a pause, and the next claim comes after it');
  assert.is(claims, 2);
});

test("a send that fails is reported with its delivery's id", async () => {
  const deps = fakeDeps();
  const brand = await brandWithEndpoint(deps, 'b');
  await createJob(deps, { brandAccountId: brand.id });
  const [pending] = deps.deliveryQueue.rows;
  const failure = new Error('the sender broke');
  deps.webhookSender.send = async () => {
    throw failure;
  };
  const reports: unknown[] = [];
  await deliverDueEvents(
    deps,
    POLICY,
    quiet({
      waitForWork: async () => {},
      stepFailed: (step, error, about) => {
        reports.push({ step, error, about });
      },
    }),
  );
  assert.equal(reports, [{ step: 'send', error: failure, about: { deliveries: 1, deliveryId: pending!.id } }]);
});

test("a mail that cannot be sent is reported, the other contacts are mailed, and the endpoint's state stands", async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  for (const [email, apiAccess] of [
    ['broken@example.com', true],
    ['fine@example.com', true],
    ['none@example.com', false],
  ] as const) {
    await createContact(deps, { accountId: brand.id, email, apiAccess });
  }
  await upsertWebhookConfig(deps, {
    accountId: brand.id,
    scope: 'brand',
    url: 'https://b.example.com/1',
    transformer: 'default',
    version: '1.3.0',
  });
  await createJob(deps, { brandAccountId: brand.id });
  deps.webhookSender = new ScriptedWebhookSender(deps.clock, () => 500);
  const refusal = new Error('the SMTP server refused');
  const mailed: string[] = [];
  deps.mailer.send = async (message) => {
    if (message.to === 'broken@example.com') throw refusal;
    mailed.push(`${message.to}: ${message.subject}`);
  };
  const reports: unknown[] = [];
  const noticed: string[] = [];
  await deliverDueEvents(
    deps,
    { ...POLICY, scheduleMs: [], disableAfterMs: 0 },
    quiet({
      waitForWork: async () => {},
      noticed: (notice) => {
        noticed.push(`${notice.kind} ${notice.url} ${notice.failedDeliveries}`);
      },
      stepFailed: (step, error, about) => {
        reports.push({ step, error, about });
      },
    }),
  );
  // The round ends once its mails are out.
  assert.equal(noticed, ['disabled https://b.example.com/1 1']);
  assert.equal(mailed, ['fine@example.com: Webhook endpoint disabled: https://b.example.com/1']);
  assert.equal(reports, [{ step: 'mail', error: refusal, about: { deliveries: 1 } }]);
  const config = await deps.webhookConfigs.find(brand.id, 'brand');
  assert.equal([config!.enabled, config!.disabledReason, config!.failingSince], [false, 'failing', deps.clock.now()]);
});

test('no endpoint slows another: a silent endpoint holds its share of sends, the others are sent meanwhile', async () => {
  const deps = fakeDeps();
  const silent = await brandWithEndpoint(deps, 'silent');
  const other = await brandWithEndpoint(deps, 'other');
  // The silent endpoint's deliveries first, so that they are the oldest due.
  for (let n = 0; n < 20; n++) await createJob(deps, { brandAccountId: silent.id });
  for (let n = 0; n < 6; n++) await createJob(deps, { brandAccountId: other.id });
  const hanging: (() => void)[] = [];
  const open = new Map<string, number>();
  const most = new Map<string, number>();
  const sentTo: string[] = [];
  let answerSilent = false;
  deps.webhookSender.send = async (request: WebhookRequest): Promise<SentAttempt> => {
    const host = new URL(request.url).host;
    sentTo.push(host);
    open.set(host, (open.get(host) ?? 0) + 1);
    most.set(host, Math.max(most.get(host) ?? 0, open.get(host)!));
    if (host.startsWith('silent') && !answerSilent) await new Promise<void>((resolve) => hanging.push(resolve));
    else await new Promise((resolve) => setTimeout(resolve, 1));
    open.set(host, open.get(host)! - 1);
    return {
      at: deps.clock.now(),
      statusCode: 200,
      durationMs: 1,
      error: null,
      exchange: { request: { url: request.url, headers: {} }, response: { headers: {}, body: '' } },
    };
  };
  const round = deliverDueEvents(deps, { ...POLICY, maxInFlight: 6, maxInFlightPerEndpoint: 2 }, quiet());
  const deadline = Date.now() + 5000;
  while (sentTo.filter((h) => h.startsWith('other')).length < 6 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 2));
  assert.is(
    sentTo.filter((h) => h.startsWith('other')).length,
    6,
    'every delivery of the other endpoint was sent while the silent one hangs',
  );
  assert.is(hanging.length, 2, 'the silent endpoint holds two sends, no more');
  answerSilent = true;
  for (const resolve of hanging) resolve();
  await round;
  assert.equal(
    [most.get('silent.example.com'), most.get('other.example.com')],
    [2, 2],
    'never more than two at once to one endpoint',
  );
  assert.is(sentTo.filter((h) => h.startsWith('silent')).length, 20);
  const log = await deps.deliveryLog.list({ limit: 100 });
  assert.equal([...new Set(log.map((d) => d.status))], ['delivered']);
});

test("one order's events written together are sent one at a time, in the order they were written", async () => {
  const deps = fakeDeps();
  const brand = await brandWithEndpoint(deps, 'ordered');
  const receiver = await receiverOf(deps, brand.id, 'brand');
  const events = Array.from({ length: 8 }, (_, n) =>
    eventFor(deps, receiver, 'OrderStatusEvent', n % 2 ? 'order-b' : 'order-a', (eid, format) => ({
      _eid: eid,
      _type: 'OrderStatusEvent',
      _v: format.version,
      n,
    })),
  );
  await deps.events.add(events);
  const sent: number[] = [];
  let open = 0;
  let most = 0;
  deps.webhookSender.send = async (request) => {
    open++;
    most = Math.max(most, open);
    await new Promise((resolve) => setTimeout(resolve, 1));
    sent.push(JSON.parse(request.body).n as number);
    open--;
    return {
      at: deps.clock.now(),
      statusCode: 200,
      durationMs: 1,
      error: null,
      exchange: { request: { url: request.url, headers: {} }, response: { headers: {}, body: '' } },
    };
  };
  await deliverDueEvents(deps, { ...POLICY, maxInFlight: 8, maxInFlightPerEndpoint: 8 }, quiet());
  assert.equal(
    sent.filter((n) => n % 2 === 0),
    [0, 2, 4, 6],
  );
  assert.equal(
    sent.filter((n) => n % 2 === 1),
    [1, 3, 5, 7],
  );
  assert.is(most, 2, 'one send at a time per order, the two orders side by side');
});

test.run();
