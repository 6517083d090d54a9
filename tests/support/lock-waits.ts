import type pg from 'pg';

/**
 * Resolves once a session of this database waits for a lock (whose statement starts with `statement`, when given;
 * held by `client`'s session, when `heldByClient`), with the ids of the sessions that do. Asked afresh each time:
 * within the holder's transaction, PostgreSQL would answer the sessions' states as it first read them.
 */
export async function untilWaitingForALock(client: pg.Client, statement = '', heldByClient = false) {
  for (let tries = 0; tries < 200; tries++) {
    await client.query('select pg_stat_clear_snapshot()');
    const { rows } = await client.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'
         and starts_with(query, $1) and (not $2 or pg_blocking_pids(pid) @> array[pg_backend_pid()])`,
      [statement, heldByClient],
    );
    if (rows.length > 0) return rows.map((r) => r.pid);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('nothing waited for the lock');
}
