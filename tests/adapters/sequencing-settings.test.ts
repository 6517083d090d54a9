import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { withDriverConnection } from '../../adapters/persistence/driver.ts';
import { sharedDatabase } from '../support/shared.ts';

// Migration 20261130050000's settings, as the database holds them. A later `create or replace function
// sequence_events` drops what the function was set to unless it says it again: this fails then.
const test = suite('migration: the sequencing round looks events up by key, and the queue is vacuumed often');

test('sequence_events runs with sequential scans off', async () => {
  const { orm } = await sharedDatabase();
  const { rows } = await withDriverConnection(orm.em.fork(), (client) =>
    client.query<{ proconfig: string[] | null }>(`select proconfig from pg_proc where proname = 'sequence_events'`),
  );
  assert.equal(
    rows.map((r) => r.proconfig),
    [['enable_seqscan=off']],
  );
});

test("the queue's autovacuum does not wait for a fifth of it to be dead", async () => {
  const { orm } = await sharedDatabase();
  const { rows } = await withDriverConnection(orm.em.fork(), (client) =>
    client.query<{ reloptions: string[] }>(`select reloptions from pg_class where relname = 'delivery_queue'`),
  );
  const options = rows[0]!.reloptions;
  assert.ok(options.includes('autovacuum_vacuum_scale_factor=0'), options.join(', '));
  assert.ok(options.includes('autovacuum_vacuum_threshold=1000'), options.join(', '));
});

test.run();
