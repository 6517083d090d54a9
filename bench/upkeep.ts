import type pg from 'pg';

/** What delivering webhooks writes to: the queue, the feed's events, the log and the endpoints' health. */
export const DELIVERY_TABLES = ['delivery_queue', 'events', 'deliveries', 'delivery_attempts', 'webhook_configs'];

/**
 * In place of autovacuum, which the bench's server may have off: the dead rows a round leaves (deleted queue rows,
 * positioned events) leave dead index entries that every later claim and sequencing round walks. This is more often
 * than a deployed server vacuums the events' partitions (a fifth of one dead, by default): see docs/BENCHMARKS.md.
 */
export async function vacuumInPlaceOfAutovacuum(db: pg.Pool | pg.Client, tables: readonly string[]): Promise<void> {
  await db.query(`vacuum analyze ${tables.join(', ')}`);
}
