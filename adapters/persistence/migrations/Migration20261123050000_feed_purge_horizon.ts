import { Migration } from '@mikro-orm/migrations';

/**
 * - `event_feed_purged`: per endpoint, the highest feed position the retention purge has deleted. A feed cursor is gone
 *   (410) only when an event after it was purged: not merely because the cursor is old (a quiet endpoint), and not
 *   while the purge has not reached what follows it.
 * - The delivery log filtered by state (`status=failed`, the replay) reads an index of the deliveries not delivered,
 *   instead of every delivery of the endpoint.
 * - `events_endpoint_seq_idx` has no reader left (the feed pages by position): one index less to write per event.
 */
export class Migration20261123050000_feed_purge_horizon extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table event_feed_purged (endpoint_id uuid primary key, position bigint not null);
create index deliveries_endpoint_unfinished_idx on deliveries (endpoint_id, created_at desc, seq desc) where status <> 'delivered';
drop index if exists events_endpoint_seq_idx;
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
create index events_endpoint_seq_idx on events (endpoint_id, seq) where endpoint_id is not null;
drop index if exists deliveries_endpoint_unfinished_idx;
drop table event_feed_purged;
`);
  }
}
