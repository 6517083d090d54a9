import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox } from '../../support/integrators.ts';
import { startReceiver } from '../../support/receiver.ts';
import { account, app, configure, createJob, deliveriesOf, ofOrder, withDeliveryApp } from './support.ts';

// A failed delivery is retried on the schedule, then failed until redelivered, without holding up other orders; every
// attempt is in the delivery log.
const test = suite('webhook delivery from the outbox: retries, order and the log');
withDeliveryApp(test);

/** The delivery log once `done` holds: an attempt is recorded just after the receiver has answered it. */
async function logOnce(accountId: string, done: (items: Awaited<ReturnType<typeof deliveriesOf>>) => boolean) {
  for (let i = 0; ; i++) {
    const items = await deliveriesOf(accountId);
    if (done(items) || i === 100) return items;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('a receiver failing twice gets the event on the third attempt; one that always fails ends failed, and redeliver heals it', async () => {
  let healthy = false;
  const receiver = await startReceiver(({ payload, n }) =>
    payload.status === 'open' ? (n <= 2 ? 500 : 200) : healthy ? 200 : 500,
  );
  const brand = await account('brand');
  await configure(brand, 'brand', receiver.url());
  const flaky = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand, status: 'open' });
  await receiver.until((r) => r.some((x) => x.answered === 200 && x.payload.orderId === flaky.apiId));
  assert.equal(
    ofOrder(receiver.received, flaky.apiId).map((r) => r.answered),
    [500, 500, 200],
  );
  const [delivered] = await logOnce(brand, ([d]) => d?.status === 'delivered');
  assert.equal(
    [delivered!.status, delivered!.attempts.map((a: { statusCode: number }) => a.statusCode)],
    ['delivered', [500, 500, 200]],
  );
  assert.match(delivered!.attempts[0].error, /^HTTP 500: failure 500/);
  assert.ok(delivered!.attempts[0].error.length < 220, 'only an excerpt of the answer');

  const doomed = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand, status: 'accepted' });
  const deadline = Date.now() + 10_000;
  let failed: Record<string, any> | undefined;
  while (!failed) {
    failed = (await deliveriesOf(brand)).find((d) => d.status === 'failed');
    assert.ok(Date.now() < deadline, 'never failed');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.is(failed.attempts.length, 4, 'the first attempt and the three of the schedule');
  assert.is(failed.nextAttemptAt, null);
  healthy = true;
  assert.equal(await app.admin.call('deliveries.redeliver', { deliveryId: failed.id }), { ok: true });
  await receiver.until((r) => r.some((x) => x.answered === 200 && x.payload.orderId === doomed.apiId));
  const healed = (await logOnce(brand, (items) => items.find((d) => d.id === failed!.id)?.status !== 'pending')).find(
    (d) => d.id === failed!.id,
  )!;
  assert.equal([healed.status, healed.attempts.length], ['delivered', 5], 'the same delivery, its attempts continued');
  assert.is((await app.admin.mutate('deliveries.redeliver', { deliveryId: randomUUID() })).status, 404);
});

test('per-order order: changes to one order arrive in order while its first is retried; another order is not held up', async () => {
  // The retry waits an hour on a test clock, moved on only once the other order has arrived: that the other order
  // went out while the first waited is then a fact of the sequence, not a race (with the suite's 150 ms schedule, a
  // loaded machine retried the first order before the test had even made the second). The suite's worker rests
  // meanwhile, so that this app's worker, with the hour-long schedule, sends everything.
  await app.worker.stop();
  const timed = await appWithMailbox({ TEST_CLOCK: '1', WEBHOOK_RETRY_SCHEDULE: '1h', WEBHOOK_TIMEOUT_MS: '2000' });
  timed.worker.start();
  try {
    let failedOnce = false;
    const receiver = await startReceiver(({ payload }) => {
      if (payload.status === 'open' && !failedOnce) {
        failedOnce = true;
        return 500;
      }
      return 200;
    });
    const brand = (
      await timed.admin.call<{ id: string }>('accounts.create', {
        name: `brand ${randomUUID().slice(0, 6)}`,
        role: 'brand',
      })
    ).id;
    await timed.admin.call('webhookConfigs.upsert', {
      accountId: brand,
      scope: 'brand',
      url: receiver.url(),
      transformer: 'default',
      version: '1.3.0',
    });
    const job = async (status: string) =>
      (await timed.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand, status })).apiId;
    const x = await job('open');
    for (const status of ['started', 'finished']) await timed.admin.call('jobs.setStatus', { apiId: x, status });
    const y = await job('accepted');
    const arrivals = (order: string) =>
      ofOrder(receiver.received, order).map((e) => `${e.payload.status}/${e.answered}`);

    await receiver.until(
      (r) => ofOrder(r, y).length > 0 && ofOrder(r, x).length > 0,
      10_000,
      'the other order, and the first try of the first',
    );
    assert.equal(
      arrivals(x),
      ['open/500'],
      "the first order's later changes wait behind its first, which waits for its retry",
    );
    assert.equal(arrivals(y), ['accepted/200'], 'the other order went out meanwhile');

    await timed.admin.call('testClock.advance', { seconds: 3600 });
    await receiver.until(
      (r) => ofOrder(r, x).filter((e) => e.answered === 200).length === 3,
      10_000,
      'the first order after its retry',
    );
    assert.equal(arrivals(x), ['open/500', 'open/200', 'started/200', 'finished/200']);
  } finally {
    await timed.worker.stop();
    app.worker.start();
  }
});

test('the delivery log over admin RPC: newest first, every attempt, filters', async () => {
  const receiver = await startReceiver();
  const brand = await account('brand');
  await configure(brand, 'brand', receiver.url());
  const first = await createJob(brand);
  const second = await createJob(brand);
  await receiver.until((r) => ofOrder(r, first).length + ofOrder(r, second).length === 2);
  const items = await logOnce(brand, (list) => list.length === 2 && list.every((d) => d.status === 'delivered'));
  assert.equal(
    items.map((d) => d.status),
    ['delivered', 'delivered'],
  );
  const [newest] = items;
  assert.equal(
    Object.keys(newest!).sort(),
    [
      'accountId',
      'attempts',
      'createdAt',
      'eventId',
      'eventType',
      'id',
      'nextAttemptAt',
      'orderId',
      'scope',
      'status',
      'url',
    ].sort(),
  );
  assert.equal(
    [newest!.eventType, newest!.scope, newest!.url, newest!.accountId],
    ['OrderStatusEvent', 'brand', receiver.url(), brand],
  );
  assert.equal(Object.keys(newest!.attempts[0]).sort(), ['at', 'durationMs', 'error', 'statusCode']);
  assert.is(ofOrder(receiver.received, second)[0]!.payload._eid, newest!.eventId);
  assert.equal(
    (await app.admin.query<{ items: unknown[] }>('deliveries.list', { accountId: brand, status: 'failed' })).items,
    [],
  );
  assert.is(
    (await app.admin.query<{ items: unknown[] }>('deliveries.list', { accountId: brand, limit: 1 })).items.length,
    1,
  );
  assert.is((await adminWithout().mutate('deliveries.redeliver', { deliveryId: newest!.id })).status, 401);
});

const adminWithout = () => ({
  mutate: (name: string, input: unknown) => app.http.post(`/trpc/admin.${name}`).send(input as object),
});

test.run();
