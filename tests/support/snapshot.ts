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

/**
 * Every table of the schema, read from the database itself: a table added later is in the snapshot at once. A
 * partitioned table is read whole, and its partitions (which come and go with the days) not apart.
 */
export async function snapshotTables(database: Database): Promise<string[]> {
  const rows = await database.orm.em.getConnection().execute<{ tablename: string }[]>(
    `select c.relname as tablename from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition order by c.relname`,
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

/**
 * The rows of each table that belong to these accounts, as a condition on the table's rows (`$ids`: the accounts' ids),
 * for the tables whose rows belong to an account other than by a column `account_id` (those need no entry).
 */
const OWNED_ROWS: Record<string, string> = {
  accounts: 'id = any($ids) or parent_id = any($ids)',
  jobs: 'brand_account_id = any($ids) or partner_id = any($ids)',
  invoices: 'order_id in (select api_id from jobs where brand_account_id = any($ids) or partner_id = any($ids))',
  order_mappings: 'brand_account_id = any($ids)',
  delivery_attempts: 'delivery_id in (select id from deliveries where account_id = any($ids))',
  delivery_queue:
    'delivery_id in (select id from deliveries where account_id = any($ids))' +
    ' or endpoint_id in (select id from webhook_configs where account_id = any($ids))',
  event_feed_purged: 'endpoint_id in (select id from webhook_configs where account_id = any($ids))',
};

/**
 * Tables of no account: shared reference data, and counters keyed by address (login_rate_limits: bookkeeping, above).
 */
const NO_ACCOUNTS = new Set(['cancellation_reasons', 'login_rate_limits']);

/**
 * A fingerprint of the rows that belong to these accounts in every table of the schema (as `snapshot`, but blind to
 * other accounts, whose work may go on meanwhile: other suites' deliveries, their commands run by a worker): equal
 * before and after means nothing of these accounts was stored, changed or removed. A table added later is in it at once
 * when its rows name their account in `account_id`; one that names it otherwise fails here until OWNED_ROWS says how.
 */
export async function snapshotOf(database: Database, accountIds: readonly string[]): Promise<Record<string, string>> {
  for (const id of accountIds) if (!/^[0-9a-f-]{36}$/i.test(id)) throw new Error(`not an account id: ${id}`);
  const ids = `array[${accountIds.map((id) => `'${id}'`).join(', ')}]::uuid[]`;
  const connection = database.orm.em.getConnection();
  const withAccountId = new Set(
    (
      await connection.execute<{ table_name: string }[]>(
        `select table_name from information_schema.columns where table_schema = current_schema() and column_name = 'account_id'`,
      )
    ).map((r) => r.table_name),
  );
  const out: Record<string, string> = {};
  for (const table of await snapshotTables(database)) {
    if (NO_ACCOUNTS.has(table)) continue;
    const owned = OWNED_ROWS[table] ?? (withAccountId.has(table) ? 'account_id = any($ids)' : undefined);
    if (!owned)
      throw new Error(
        `snapshotOf: which rows of ${table} belong to an account? Say so in OWNED_ROWS (tests/support/snapshot.ts)`,
      );
    const row = (BACKGROUND_COLUMNS[table] ?? []).reduce((sql, column) => `(${sql} - '${column}')`, 'to_jsonb(t)');
    const [result] = await connection.execute<{ f: string | null }[]>(
      `select count(*)::text || ':' || coalesce(md5(string_agg(${row}::text, ',' order by ${row}::text)), '') as f
       from "${table}" t where (${owned.replaceAll('$ids', ids)})`,
    );
    out[table] = result?.f ?? '';
  }
  return out;
}
