import { Migration } from '@mikro-orm/migrations';

/**
 * The event feed (CONTRACT §10): each event of an endpoint gets a feed position once it has committed, from one
 * sequencer at a time, so that positions grow in the order events became visible and no reader can pass a position
 * that a slower transaction fills in later (`adapters/persistence/event-feed.ts` explains the method).
 */
export class Migration20261123030000_event_feed extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create sequence events_position_seq;
alter table events add column position bigint;
create unique index events_feed_idx on events (endpoint_id, position) where position is not null;
create index events_unpositioned_idx on events (seq) where position is null and endpoint_id is not null;
create index deliveries_endpoint_log_idx on deliveries (endpoint_id, created_at desc, seq desc);
drop index if exists deliveries_endpoint_idx;
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
create index deliveries_endpoint_idx on deliveries (endpoint_id, created_at desc);
drop index if exists deliveries_endpoint_log_idx;
drop index if exists events_unpositioned_idx;
drop index if exists events_feed_idx;
alter table events drop column position;
drop sequence events_position_seq;
`);
  }
}
