import type { MikroORM } from '@mikro-orm/postgresql';

// PGlite is one backend in single-user mode: no checkpointer and no autovacuum run beside it (it says `autovacuum on`
// all the same). The upkeep does their work on the one connection, a short statement at a time.

/**
 * The tables autovacuum would take now, at its default thresholds: a vacuum (with analyze) past 50 dead rows plus a
 * fifth of the live ones, an analyze past 50 changed rows plus a tenth. The queues (commands, delivery_queue) and the
 * counters update every row they carry: without it their dead rows pile up, and every claim walks them.
 */
const DUE = `
  select format('%I.%I', schemaname, relname) as name, n_dead_tup > 50 + 0.2 * n_live_tup as vacuum
  from pg_stat_user_tables
  where n_dead_tup > 50 + 0.2 * n_live_tup or n_mod_since_analyze > 50 + 0.1 * n_live_tup
  order by n_dead_tup desc`;

/** PostgreSQL's undefined_table: a day of history dropped past its retention between the list and its vacuum. */
const DROPPED_MEANWHILE = '42P01';

/**
 * Every `everyMs`: the tables due, vacuumed or analyzed one statement each, then a checkpoint when `checkpoints` (a
 * database on a folder: without them, a process killed replays at its next start all the WAL written since it opened
 * the folder, 14 s after 1.3 GB here, and pg_wal grows without end). A round still under way skips the next. A step
 * that fails is told to `warning` (but for a table dropped meanwhile) and the round goes on: the next round tries
 * again, and an operator sees why dead rows pile up. Answers how to stop it.
 */
export function startEmbeddedUpkeep(
  orm: MikroORM,
  everyMs: number,
  checkpoints: boolean,
  warning: (message: string) => void,
): () => void {
  let running = false;
  const attempt = (statement: string) =>
    orm.em
      .getConnection()
      .execute<{ name: string; vacuum: boolean }[]>(statement)
      .catch((error: { code?: string; message?: string }) => {
        if (error.code !== DROPPED_MEANWHILE)
          warning(`embedded upkeep: ${statement.trim().split('\n')[0]} failed: ${error.message ?? String(error)}`);
        return [];
      });
  const round = async () => {
    for (const table of await attempt(DUE))
      await attempt(`${table.vacuum ? 'vacuum (analyze)' : 'analyze'} ${table.name}`);
    if (checkpoints) await attempt('checkpoint');
  };
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    // A warning that throws (a closed log) waits for the next round like any other failure.
    round()
      .catch(() => {})
      .finally(() => {
        running = false;
      });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
