import type { Database } from '../../adapters/persistence/database/open.ts';

/** Bookkeeping of the migrator, not data: it changes only when the schema does. */
const NOT_DATA = new Set(['mikro_orm_migrations']);

/** Columns that background work sets whatever a request did: an event's feed position (the sequencer gives it). */
const BACKGROUND_COLUMNS: Record<string, readonly string[]> = { events: ['position'] };

/**
 * Rows that background work may delete whatever a request did: rate-limiter-flexible purges counters that expired
 * more than an hour ago (`expire` is in epoch milliseconds), at its own pace. And the fair-use counters of requests
 * per account and second: every authenticated request counts, whatever it answers; they are bookkeeping, not data.
 */
const BACKGROUND_ROWS: Record<string, string> = {
  login_rate_limits: `where (expire is null or expire >= (extract(epoch from now()) * 1000)::bigint - 3600000) and key not like 'account-requests:%'`,
};

/** Every table of the schema, read from the database itself: a table added later is in the snapshot at once. */
export async function snapshotTables(database: Database): Promise<string[]> {
  const rows = await database.orm.em.getConnection().execute<{ tablename: string }[]>(
    `select tablename from pg_tables where schemaname = current_schema() order by tablename`,
  );
  return rows.map((r) => r.tablename).filter((t) => !NOT_DATA.has(t));
}

/**
 * A fingerprint of every stored row of every table: equal before and after means nothing changed. Only what the
 * background changes on its own is left out (above).
 */
export async function snapshot(database: Database): Promise<Record<string, string>> {
  const connection = database.orm.em.getConnection();
  const out: Record<string, string> = {};
  for (const table of await snapshotTables(database)) {
    const row = (BACKGROUND_COLUMNS[table] ?? []).reduce((sql, column) => `(${sql} - '${column}')`, 'to_jsonb(t)');
    const [result] = await connection.execute<{ f: string | null }[]>(
      `select count(*)::text || ':' || coalesce(md5(string_agg(${row}::text, ',' order by ${row}::text)), '') as f
       from "${table}" t ${BACKGROUND_ROWS[table] ?? ''}`,
    );
    out[table] = result?.f ?? '';
  }
  return out;
}
