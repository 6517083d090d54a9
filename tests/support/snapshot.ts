import type { Database } from '../../adapters/persistence/open-database.ts';

const TABLES = ['accounts', 'contacts', 'webhook_configs', 'jobs', 'invoices', 'cancellation_reasons', 'order_mappings', 'events'];

/**
 * A fingerprint of every stored row: equal before and after means nothing changed. An event's feed position is left
 * out: the sequencer gives committed events theirs in the background, whatever a request did.
 */
export async function snapshot(database: Database): Promise<Record<string, string>> {
  const connection = database.orm.em.getConnection();
  const out: Record<string, string> = {};
  for (const table of TABLES) {
    const [row] = await connection.execute<{ f: string | null }[]>(
      `select count(*)::text || ':' || coalesce(md5(string_agg((to_jsonb(t) - 'position')::text, ',' order by (to_jsonb(t) - 'position')::text)), '') as f from ${table} t`,
    );
    out[table] = row?.f ?? '';
  }
  return out;
}
