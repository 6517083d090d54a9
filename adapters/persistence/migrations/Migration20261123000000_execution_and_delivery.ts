import { Migration } from '@mikro-orm/migrations';

/**
 * Brand commands run by an executor, and events delivered by a sender: both are queues in PostgreSQL, claimed
 * with FOR UPDATE SKIP LOCKED under a lease (claims by concurrent workers never overlap, and a dead worker's claims
 * are taken up when their lease runs out). The partial indexes hold only the work still to do, so that the claim
 * stays a short index scan however long the history grows.
 */
export class Migration20261123000000_execution_and_delivery extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table commands drop constraint commands_status_check;
alter table commands add constraint commands_status_check check (status in ('running', 'accepted', 'succeeded', 'failed'));
alter table commands
  add column seq bigint generated always as identity,
  add column attempts integer not null default 0,
  add column lease_until timestamptz,
  add column claim_token uuid,
  add column result json,
  add column finished_at timestamptz;
create index commands_accepted_idx on commands (seq) where status = 'accepted';
-- Commands answered before results were kept: finished when last updated, so that the 24 h purge frees their _cid.
update commands set finished_at = updated_at where status in ('succeeded', 'failed') and finished_at is null;
create index commands_finished_idx on commands (finished_at) where finished_at is not null;

-- Payloads and answers are kept as the text they were rendered to (json, not jsonb), so that what is delivered and
-- polled keeps its members in the order the renderer put them (_eid, _type, _v first).
alter table commands alter column answer type json using answer::json;
alter table events alter column payload type json using payload::json;
alter table events add column endpoint_id uuid;
create index events_endpoint_seq_idx on events (endpoint_id, seq) where endpoint_id is not null;

-- One delivery per event that is to be delivered, to the endpoint (webhook configuration) it was made for; the
-- endpoint's URL and key are read when it is sent. Deliveries of one endpoint and one order go out in seq order.
create table deliveries (
  id uuid primary key,
  seq bigint generated always as identity unique,
  event_id uuid not null unique references events (id) on delete cascade,
  endpoint_id uuid not null,
  account_id uuid not null,
  order_id text collate "C",
  status text not null check (status in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null,
  lease_until timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index deliveries_due_idx on deliveries (next_attempt_at, seq) where status = 'pending';
create index deliveries_order_idx on deliveries (endpoint_id, order_id, seq) where status = 'pending' and order_id is not null;
create index deliveries_endpoint_idx on deliveries (endpoint_id, created_at desc);
create index deliveries_account_idx on deliveries (account_id, created_at desc);
create index deliveries_finished_idx on deliveries (updated_at) where status <> 'pending';

-- Every HTTP try of a delivery, for the delivery log.
create table delivery_attempts (
  id bigint generated always as identity primary key,
  delivery_id uuid not null references deliveries (id) on delete cascade,
  at timestamptz not null,
  status_code integer,
  duration_ms integer not null,
  error text
);
create index delivery_attempts_delivery_idx on delivery_attempts (delivery_id, id);

-- Retention (EVENT_RETENTION_DAYS) purges the oldest events first.
create index events_created_at_idx on events (created_at);
`);
  }
}
