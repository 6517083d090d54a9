import type pg from 'pg';

/** What delivering webhooks writes to: the queue, the feed's events, the log and the endpoints' health. */
export const DELIVERY_TABLES = ['delivery_queue', 'events', 'deliveries', 'delivery_attempts', 'webhook_configs'];

/**
 * What autovacuum does on a deployed server (the bench's server may have it off; the delivery queue is vacuumed after
 * every thousand deletions there, migration 20261130050000): the dead rows a round leaves behind (deleted queue rows,
 * positioned events) would otherwise leave dead index entries that every later claim and sequencing round walks.
 */
export async function vacuumAsAutovacuumWould(db: pg.Pool | pg.Client, tables: readonly string[]): Promise<void> {
  await db.query(`vacuum analyze ${tables.join(', ')}`);
}
