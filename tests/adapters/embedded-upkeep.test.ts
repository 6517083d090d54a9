import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../adapters/persistence/database/open.ts';

// PGlite runs no checkpointer and no autovacuum of its own: a process killed would replay at its next start all the WAL
// written since it opened the folder (14 s after 1.3 GB on a loaded test machine), pg_wal would grow without end, and
// the queues' dead rows would pile up.
const test = suite("the embedded database's upkeep");

test('takes checkpoints while it runs: after a kill, only the WAL written since the last one is replayed', async () => {
  const root = mkdtempSync(join(tmpdir(), 'pbi-checkpoints-'));
  const database = await openDatabase({ pgliteDir: join(root, 'pglite'), embeddedUpkeepMs: 200 });
  try {
    const sql = <T>(text: string) => database.orm.em.fork().getConnection().execute<T[]>(text);
    await sql('create table wal_filler (body text)');
    await sql('insert into wal_filler select repeat(md5(g::text), 32) from generate_series(1, 5000) g'); // ~5 MB of WAL
    const walSinceCheckpoint = async () =>
      Number(
        (
          await sql<{ behind: string }>(
            'select pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::bigint as behind from pg_control_checkpoint()',
          )
        )[0]!.behind,
      );
    const deadline = Date.now() + 10_000;
    let behind = await walSinceCheckpoint();
    while (behind > 1_000_000 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      behind = await walSinceCheckpoint();
    }
    assert.ok(behind < 1_000_000, `${behind} bytes of WAL since the last checkpoint, 10 s after the writes`);
  } finally {
    await database.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test('vacuums a table once autovacuum would: its dead rows are cleared while the service runs', async () => {
  const database = await openDatabase({ pgliteDir: 'memory://', embeddedUpkeepMs: 200 });
  try {
    const sql = <T>(text: string) => database.orm.em.fork().getConnection().execute<T[]>(text);
    await sql('create table churn (id int primary key, body text)');
    await sql("insert into churn select g, 'x' from generate_series(1, 5000) g");
    await sql('delete from churn where id > 100');
    const stats = async () =>
      (
        await sql<{ dead: string; vacuumed: boolean }>(
          `select n_dead_tup as dead, last_vacuum is not null as vacuumed from pg_stat_user_tables
           where relname = 'churn'`,
        )
      )[0]!;
    const deadline = Date.now() + 10_000;
    let now = await stats();
    while (!now.vacuumed && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      now = await stats();
    }
    assert.equal([now.vacuumed, Number(now.dead)], [true, 0], 'vacuumed within 10 s, no dead rows left');
  } finally {
    await database.close();
  }
});

test('says why a vacuum failed, and goes on with the other tables', async () => {
  const warnings: string[] = [];
  const database = await openDatabase({
    pgliteDir: 'memory://',
    embeddedUpkeepMs: 200,
    upkeepWarning: (message) => warnings.push(message),
  });
  try {
    const sql = <T>(text: string) => database.orm.em.fork().getConnection().execute<T[]>(text);
    // An expression index whose function fails once the rows are in: analyze evaluates it, and so refuses the table.
    await sql('create function upkeep_probe(n int) returns int immutable language sql as $$ select n $$');
    await sql('create table refused (id int primary key)');
    await sql('create index refused_probe on refused (upkeep_probe(id))');
    await sql('create table churned (id int primary key)');
    for (const table of ['refused', 'churned']) {
      await sql(`insert into ${table} select g from generate_series(1, 2000) g`);
      await sql(`delete from ${table} where id > 100`);
    }
    await sql(
      `create or replace function upkeep_probe(n int) returns int immutable language plpgsql as
       $$ begin raise exception 'probe refuses %', n; end $$`,
    );
    const vacuumed = async () =>
      (
        await sql<{ vacuumed: boolean }>(
          `select last_vacuum is not null as vacuumed from pg_stat_user_tables where relname = 'churned'`,
        )
      )[0]!.vacuumed;
    const deadline = Date.now() + 10_000;
    while (!(warnings.length > 0 && (await vacuumed())) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok(
      warnings.some((w) => w.includes('public.refused') && w.includes('probe refuses')),
      `a warning naming the table and the cause: ${JSON.stringify(warnings)}`,
    );
    assert.ok(await vacuumed(), 'the other table vacuumed all the same');
  } finally {
    await database.close();
  }
});

test.run();
