import { Migration } from '@mikro-orm/migrations';

/**
 * What the integrators' self-service reads by (CONTRACT §10): one order's deliveries and one order's events, each from
 * an index of its own instead of the endpoint's whole log or feed; and the endpoint's attempts by time, for their
 * statistics, from an index of the attempts keyed by endpoint (the attempt names its endpoint from now on; the
 * attempts logged before take it from their delivery).
 */
export class Migration20261129110000_log_filters extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create index deliveries_endpoint_order_idx on deliveries (endpoint_id, order_id, created_at desc, seq desc) where order_id is not null;
create index events_feed_order_idx on events (endpoint_id, order_id, position) where position is not null and order_id is not null;
alter table delivery_attempts add column endpoint_id uuid;
update delivery_attempts a set endpoint_id = d.endpoint_id from deliveries d where d.id = a.delivery_id;
create index delivery_attempts_endpoint_at_idx on delivery_attempts (endpoint_id, at);
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop index delivery_attempts_endpoint_at_idx;
alter table delivery_attempts drop column endpoint_id;
drop index events_feed_order_idx;
drop index deliveries_endpoint_order_idx;
`);
  }
}
