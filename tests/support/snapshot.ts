import type { Database } from '../../adapters/persistence/open-database.ts';

const TABLES = ['accounts', 'contacts', 'webhook_configs', 'jobs', 'invoices', 'cancellation_reasons', 'order_mappings', 'events'];

/** A fingerprint of every stored row: equal before and after means nothing changed. */
export async function snapshot(database: Database): Promise<Record<string, string>> {
  const connection = database.orm.em.getConnection();
  const out: Record<string, string> = {};
  for (const table of TABLES) {
    const [row] = await connection.execute<{ f: string | null }[]>(
      `select count(*)::text || ':' || coalesce(md5(string_agg(t::text, ',' order by t::text)), '') as f from ${table} t`,
    );
    out[table] = row?.f ?? '';
  }
  return out;
}
