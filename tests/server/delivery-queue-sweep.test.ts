import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SWEEP_LOCK } from '../../adapters/persistence/delivery-queue.ts';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { deliveryQueueSweep } from '../../server/worker/delivery-pump.ts';
import {
  account,
  claimAll,
  DAY,
  orderEvent,
  recordDelivered,
  saveWithEvents,
  webhookConfig,
} from '../contracts/samples.ts';
import { testApp } from '../support/app.ts';
import { sharedDatabase } from '../support/shared.ts';
import { onPostgres } from '../support/skip.ts';

// The queue's sweep (DeliveryQueue.settle) as the worker runs it: its own task, on its own cadence, setting right the
// flags a race left wrong, on either database; and on a server, one process's sweep at a time.
const test = suite("the delivery queue's sweep task");

test('the task sets right the flags a race left wrong, and passes while another process sweeps', async () => {
  const { services } = await testApp();
  const { orm } = await sharedDatabase();
  const run = mikroOrmTransact(orm);
  const sql = <T extends object[]>(text: string, values: unknown[] = []) =>
    orm.em.fork().getConnection().execute<T>(text, values);
  const flags = async (endpointId: string) =>
    (
      await sql<{ blocked: boolean }[]>(
        'select blocked from delivery_queue where endpoint_id = ? and not paused order by position',
        [endpointId],
      )
    ).map((r) => r.blocked);
  const brand = account();
  // Older than any other suite's deliveries, so that these claims see only these.
  const now = new Date('2016-07-01T00:00:00.000Z');
  const config = webhookConfig(brand.id, 'https://hooks.example.com/sweep-task', now);
  const events = [0, 1, 2].map((n) => orderEvent(config, 'S1', new Date(now.getTime() + n), { _eid: `s${n}`, n }));
  await saveWithEvents(run, brand, config, events);
  const claim = (at: Date) => run((r) => claimAll(r, 10, at, new Date(at.getTime() + 400), randomUUID()));
  assert.equal(await claim(new Date(now.getTime() - DAY)), [], 'queued, none due yet');
  assert.equal(await flags(config.id), [false, true, true], 'an order queued behind its first');

  const task = deliveryQueueSweep(services);
  assert.is(task.name, 'delivery queue sweep');
  assert.is(task.idleDelayMs, 30_000, 'a pass over the whole queue, every 30 s');
  const wrong = () => sql('update delivery_queue set blocked = not blocked where endpoint_id = ?', [config.id]);

  if (onPostgres) {
    await wrong();
    const other = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await other.connect();
    const takes = async () =>
      (await other.query('select pg_try_advisory_xact_lock($1) as mine', [SWEEP_LOCK])).rows[0].mine as boolean;
    try {
      await other.query('begin');
      assert.ok(await takes(), "the other process's sweep under way");
      assert.is(await task.runOnce({ stopping: () => false }), false);
      assert.equal(await flags(config.id), [true, false, false], 'left to the sweep under way');
      await other.query('rollback');
      assert.is(await task.runOnce({ stopping: () => false }), false);
      assert.equal(await flags(config.id), [false, true, true], 'set right once no other sweeps');
      // Held for the sweep's transaction only: a lock kept by its pooled connection would stop every other sweep.
      assert.ok(await takes(), 'free again after the sweep');
    } finally {
      await other.end();
    }
  }

  await wrong();
  assert.is(await task.runOnce({ stopping: () => false }), false, 'nothing more to do until its cadence');
  assert.equal(await flags(config.id), [false, true, true], 'set right');

  // Leave nothing pending for the workers of later suites on a shared database.
  for (let ms = 1000, left = await claim(new Date(now.getTime() + ms)); left.length > 0; ms += 1000) {
    await run((r) => recordDelivered(r, left, new Date(now.getTime() + ms)));
    left = await claim(new Date(now.getTime() + ms + 1000));
  }
  assert.equal(await flags(config.id), [], 'all delivered');
});

test.run();
