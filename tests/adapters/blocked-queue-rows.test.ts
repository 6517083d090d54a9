import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Database } from '../../adapters/persistence/database/open.ts';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { OutboxEvent } from '../../domain/event.ts';
import type { WebhookConfig } from '../../domain/webhook-config.ts';
import { account, claimAll, DAY, recordDelivered, webhookConfig } from '../contracts/samples.ts';
import { sharedDatabase } from '../support/shared.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// An order's deliveries behind its first are flagged `blocked` in the queue (migration 20261202000000), so that no
// claim walks them (bench/claims-behind-blocked.ts): flagged as they are queued, the next one freed as the first
// leaves, a later one flagged again when a redelivery queues an earlier one, and a flag a race left wrong set right by
// the retention round's sweep; and a row queued while its order's first leaves is never left blocked.
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
    run((r) => claimAll(r, 10, new Date(now.getTime() + ms), new Date(now.getTime() + ms + 1), randomUUID()));
  const n = (claimed: { body: string }[]) => claimed.map((d) => JSON.parse(d.body).n);

  const [first, ...none] = await claim(1000);
  assert.equal(n([first!, ...none]), [0], 'the first only');
  assert.equal(await flags(orm, config.id), [false, true, true], 'queued behind the first');

  await run((r) => recordDelivered(r, [first!], new Date(now.getTime() + 1000)));
  assert.equal(await flags(orm, config.id), [false, true], 'the next freed as the first leaves');

  // The second fails for good; the third is the order's first; the second, redelivered, comes before it again.
  const [second] = await claim(2000);
  assert.equal(n([second!]), [1]);
  await run((r) =>
    r.deliveryQueue.record(
      [
        {
          deliveryId: second!.id,
          endpointId: second!.endpointId,
          claimToken: second!.claimToken,
          createdAt: second!.createdAt,
          attempt: { at: new Date(now.getTime() + 2000), statusCode: 500, durationMs: 1, error: 'HTTP 500' },
          exchange: { request: { url: config.url!, headers: {} }, response: { headers: {}, body: '' } },
          state: { status: 'failed' },
        },
      ],
      new Date(now.getTime() + 2000),
      DAY,
    ),
  );
  assert.equal(await flags(orm, config.id), [false], 'the third is the first now');
  assert.ok(await run((r) => r.deliveryLog.redeliver(second!.id, new Date(now.getTime() + 3000))));
  assert.equal(await flags(orm, config.id), [false, true], 'blocked again behind the redelivered one');

  // A flag set wrong is set right by the sweep.
  const connection = orm.em.fork().getConnection();
  await connection.execute('update delivery_queue set blocked = not blocked where endpoint_id = ?', [config.id]);
  const [settle] = await connection.execute<{ settled: number }[]>('select settle_order_heads() as settled');
  const settled = settle?.settled ?? 0;
  assert.ok(settled >= 2, `${settled} set right`);
  assert.equal(await flags(orm, config.id), [false, true], 'set right');

  // Leave nothing pending for the workers of later suites on a shared database.
  for (let ms = 4000, left = await claim(ms); left.length > 0; ms += 1000, left = await claim(ms)) {
    await run((r) => recordDelivered(r, left, new Date(now.getTime() + ms)));
  }
  assert.equal(await flags(orm, config.id), [], 'all delivered');
});

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
      const waits = async (client: pg.Client) => {
        const pid = (client as unknown as { processID: number }).processID;
        for (let tries = 0; tries < 200; tries++) {
          const { rows } = await watcher.query('select wait_event_type from pg_stat_activity where pid = $1', [pid]);
          if (rows[0]?.wait_event_type === 'Lock') return true;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        return false;
      };
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
      for (const c of [queuer, leaver]) await c.query('rollback').catch(() => {});
      for (const c of [queuer, leaver, watcher]) await c.end();
    }
    const [next] = await run((r) =>
      claimAll(r, 10, new Date(now.getTime() + 2000), new Date(now.getTime() + DAY), randomUUID()),
    );
    assert.equal(next && JSON.parse(next.body).n, 1, 'and claimed');
    await run((r) => recordDelivered(r, [next!], new Date(now.getTime() + 2000)));
  });
}

test.run();
