import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Database } from '../../adapters/persistence/database/open.ts';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import type { ClaimedDelivery } from '../../domain/delivery.ts';
import { OutboxEvent } from '../../domain/event.ts';
import type { Repositories } from '../../domain/ports.ts';
import type { WebhookConfig } from '../../domain/webhook-config.ts';
import { account, claimAll, DAY, recordDelivered, webhookConfig } from '../contracts/samples.ts';
import { sharedDatabase } from '../support/shared.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// An order's deliveries behind its first are flagged `blocked` in the queue (migration 20261202000000), so that no
// claim walks them (bench/claims-behind-blocked.ts): flagged as they are queued, the next one freed as the first
// leaves, a later one flagged again when a redelivery queues an earlier one, and a flag a race left wrong set right by
// the queue's sweep (a worker task); and a row queued while its order's first leaves is never left blocked.
const test = suite("the delivery queue's blocked rows");

/** The blocked flags of an endpoint's queued rows, in feed order. */
const flags = async (orm: Database['orm'], endpointId: string) =>
  (
    await orm.em
      .fork()
      .getConnection()
      .execute<{ blocked: boolean }[]>('select blocked from delivery_queue where endpoint_id = ? order by position', [
        endpointId,
      ])
  ).map((r) => r.blocked);

const orderEvent = (config: WebhookConfig, orderId: string, n: number, now: Date) =>
  new OutboxEvent({
    id: randomUUID(),
    accountId: config.accountId,
    scope: 'brand',
    type: 'OrderStatusEvent',
    orderId,
    payload: { _eid: `b${n}`, n },
    endpointId: config.id,
    deliver: true,
    createdAt: new Date(now.getTime() + n),
  });

/** Records what a claim took as failed for good at `at` (a 500, its retries spent). */
const recordFailed = (r: Repositories, d: ClaimedDelivery, url: string, at: Date) =>
  r.deliveryQueue.record(
    [
      {
        deliveryId: d.id,
        endpointId: d.endpointId,
        claimToken: d.claimToken,
        createdAt: d.createdAt,
        attempt: { at, statusCode: 500, durationMs: 1, error: 'HTTP 500' },
        exchange: { request: { url, headers: {} }, response: { headers: {}, body: '' } },
        state: { status: 'failed' },
      },
    ],
    at,
    DAY,
  );
const numbers = (claimed: { body: string }[]) => claimed.map((d) => JSON.parse(d.body).n);

test('an order is blocked behind its first, freed as the first leaves, blocked again behind a redelivery', async () => {
  const { orm } = await sharedDatabase();
  const run = mikroOrmTransact(orm);
  const brand = account();
  // Older than any other suite's deliveries, so that these claims see only these.
  const now = new Date('2018-03-01T00:00:00.000Z');
  const config = webhookConfig(brand.id, 'https://hooks.example.com/blocked', now);
  await run(async (r) => {
    await r.accounts.save(brand);
    await r.webhookConfigs.save(config);
    await r.events.add([0, 1, 2].map((n) => orderEvent(config, 'B1', n, now)));
  });
  const claim = (ms: number) =>
    run((r) => claimAll(r, 10, new Date(now.getTime() + ms), new Date(now.getTime() + ms + 400), randomUUID()));

  const [first, ...none] = await claim(1000);
  assert.equal(numbers([first!, ...none]), [0], 'the first only');
  assert.equal(await flags(orm, config.id), [false, true, true], 'queued behind the first');
  // Queued in a round of its own, behind rows already there.
  await run((r) => r.events.add([orderEvent(config, 'B1', 3, now)]));
  assert.equal(await claim(1200), [], 'the first is under way, the rest wait');
  assert.equal(await flags(orm, config.id), [false, true, true, true], 'queued behind rows already there');

  await run((r) => recordDelivered(r, [first!], new Date(now.getTime() + 1300)));
  assert.equal(await flags(orm, config.id), [false, true, true], 'the next freed as the first leaves');

  // The second fails for good; the third is the order's first; the second, redelivered, comes before it again.
  const [second] = await claim(2000);
  assert.equal(numbers([second!]), [1]);
  await run((r) => recordFailed(r, second!, config.url!, new Date(now.getTime() + 2000)));
  assert.equal(await flags(orm, config.id), [false, true], 'the third is the first now');
  assert.ok(await run((r) => r.deliveryLog.redeliver(second!.id, new Date(now.getTime() + 3000))));
  assert.equal(await flags(orm, config.id), [false, true, true], 'blocked again behind the redelivered one');

  // A flag set wrong is set right by the sweep.
  const connection = orm.em.fork().getConnection();
  await connection.execute('update delivery_queue set blocked = not blocked where endpoint_id = ?', [config.id]);
  const [settle] = await connection.execute<{ settled: number }[]>('select settle_order_heads() as settled');
  const settled = settle?.settled ?? 0;
  assert.ok(settled >= 3, `${settled} set right`);
  assert.equal(await flags(orm, config.id), [false, true, true], 'set right');

  // Leave nothing pending for the workers of later suites on a shared database.
  for (let ms = 4000, left = await claim(ms); left.length > 0; ms += 1000, left = await claim(ms)) {
    await run((r) => recordDelivered(r, left, new Date(now.getTime() + ms)));
  }
  assert.equal(await flags(orm, config.id), [], 'all delivered');
});

/** Whether `client`'s statement waits for an advisory lock (the sequencer's), seen from `watcher`; up to 10 s. */
async function waitsForAdvisoryLock(watcher: pg.Client, client: pg.Client) {
  const pid = (client as unknown as { processID: number }).processID;
  for (let tries = 0; tries < 400; tries++) {
    const { rows } = await watcher.query('select wait_event from pg_stat_activity where pid = $1', [pid]);
    if (rows[0]?.wait_event === 'advisory') return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

/**
 * A row queued (by a sequencing round) while its order's first leaves the queue (a record) is freed whichever of the
 * two commits first: the queuer reads the first as still there, and the leaver cannot see the new row until the
 * queuer commits, so each waits for the other's lock before it looks.
 */
for (const first of ['the queuer', 'the leaver'] as const) {
  test(`a row queued as its order's first leaves is not left blocked (${first} first)`, async () => {
    if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
    const { orm } = await sharedDatabase();
    const run = mikroOrmTransact(orm);
    const brand = account();
    const now = new Date('2018-04-01T00:00:00.000Z');
    const config = webhookConfig(brand.id, `https://hooks.example.com/race-${first.slice(4)}`, now);
    await run(async (r) => {
      await r.accounts.save(brand);
      await r.webhookConfigs.save(config);
      await r.events.add([orderEvent(config, 'R1', 0, now)]);
    });
    const [head] = await run((r) =>
      claimAll(r, 10, new Date(now.getTime() + 1000), new Date(now.getTime() + DAY), randomUUID()),
    );
    assert.ok(head);
    await run((r) => r.events.add([orderEvent(config, 'R1', 1, now)]));
    const client = () => new pg.Client({ connectionString: process.env.DATABASE_URL });
    const [queuer, leaver, watcher] = [client(), client(), client()];
    try {
      for (const c of [queuer, leaver, watcher]) await c.connect();
      const waits = (client: pg.Client) => waitsForAdvisoryLock(watcher, client);
      const leave = (client: pg.Client) => client.query('delete from delivery_queue where delivery_id = $1', [head.id]);
      if (first === 'the queuer') {
        await queuer.query('begin');
        await queuer.query('select sequence_round_waiting(1000)');
        assert.equal(await flags(orm, config.id), [false], 'the new row not seen yet');
        const left = leave(leaver);
        assert.ok(await waits(leaver), 'the leaver waits for the queuer');
        await queuer.query('commit');
        await left;
      } else {
        await leaver.query('begin');
        await leave(leaver);
        const queued = queuer.query('select sequence_round_waiting(1000)');
        assert.ok(await waits(queuer), 'the queuer waits for the leaver');
        await leaver.query('commit');
        await queued;
      }
      assert.equal(await flags(orm, config.id), [false], 'the new row is its order’s first, not blocked');
    } finally {
      // At once: one may wait for the other's lock.
      await Promise.all([queuer, leaver].map((c) => c.query('rollback').catch(() => {})));
      for (const c of [queuer, leaver, watcher]) await c.end();
    }
    const [next] = await run((r) =>
      claimAll(r, 10, new Date(now.getTime() + 2000), new Date(now.getTime() + DAY), randomUUID()),
    );
    assert.equal(next && JSON.parse(next.body).n, 1, 'and claimed');
    await run((r) => recordDelivered(r, [next!], new Date(now.getTime() + 2000)));
  });
}

// A redelivery does not wait for a record: the record takes the sequencer's lock after the rows it holds, so a
// redelivery that took it and then waited for one of them would deadlock with it. A later row it cannot flag (held by
// the record) is left to the claim's own check and to the sweep.
test('a redelivery beside a record of its order waits for neither lock nor row', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const { orm } = await sharedDatabase();
  const run = mikroOrmTransact(orm);
  const brand = account();
  const now = new Date('2018-05-01T00:00:00.000Z');
  const config = webhookConfig(brand.id, 'https://hooks.example.com/redelivery-beside-record', now);
  await run(async (r) => {
    await r.accounts.save(brand);
    await r.webhookConfigs.save(config);
    await r.events.add([0, 1].map((n) => orderEvent(config, 'D1', n, now)));
  });
  const claim = (ms: number) =>
    run((r) => claimAll(r, 10, new Date(now.getTime() + ms), new Date(now.getTime() + ms + 60_000), randomUUID()));
  const [failed] = await claim(1000);
  await run((r) => recordFailed(r, failed!, config.url!, new Date(now.getTime() + 1000)));
  const [underWay] = await claim(2000);
  assert.equal(numbers([failed!, underWay!]), [0, 1]);
  const recorder = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await recorder.connect();
  try {
    await recorder.query('begin');
    // As a record does: the row leaves, its trigger takes the lock shared, and the transaction goes on.
    await recorder.query('delete from delivery_queue where delivery_id = $1', [underWay!.id]);
    const redelivered = run((r) => r.deliveryLog.redeliver(failed!.id, new Date(now.getTime() + 3000)));
    const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 5000).unref());
    assert.equal(await Promise.race([redelivered, late]), true, 'redelivered at once');
  } finally {
    await recorder.query('rollback').catch(() => {});
    await recorder.end();
  }
  // The record rolled back: its row is back, unflagged, behind the redelivered one; the claim keeps the order.
  assert.equal(await flags(orm, config.id), [false, false]);
  assert.equal(numbers(await claim(3000 + 60_001)), [0], 'the redelivered one first');
  const connection = orm.em.fork().getConnection();
  await connection.execute('select settle_order_heads()');
  assert.equal(await flags(orm, config.id), [false, true], 'set right by the sweep');
  for (let ms = 200_000, left = await claim(ms); left.length > 0; ms += 100_000, left = await claim(ms)) {
    await run((r) => recordDelivered(r, left, new Date(now.getTime() + ms)));
  }
});

test.run();
