import { Migration } from '@mikro-orm/migrations';

/** The feed sequencer's advisory lock key ('pbi1'), as adapters/persistence/event-feed.ts takes it. */
const SEQUENCER_LOCK = 0x7062_6931;

/**
 * Deliveries are sent from a queue of their own, in the order of their events' feed positions (CONTRACT §7):
 *
 * - `delivery_queue` holds the deliveries still to be sent, and nothing else: a small, hot table whose claims are HOT
 *   updates and whose finished rows are deleted, so that a claim never wades through the history. `deliveries` stays
 *   the log: its rows are written when made and when an attempt is recorded, on no index that the record changes
 *   (status moved out of every index), so that most records are HOT updates too.
 * - A delivery enters the queue when its event gets its feed position, from the same round of the sequencer
 *   (`sequence_events`), with that position. The claim holds a delivery back while an earlier position of its endpoint
 *   and order is queued, so one order's deliveries go out in feed order whatever transaction, batch or process wrote
 *   them. Before, they went in the order their rows were inserted: a batch's deliveries came from an unordered
 *   `select … where id = any($1)`, and a receiver saw blocks of one order's events swapped.
 * - `failed_at` marks a delivery that failed for good (the index of the failed ones, for the log's filter and the replay).
 *
 * A rolling deploy: the feed's position sequence is renamed, so that only this release positions events (every event it
 * positions has its pending delivery queued; an earlier release's sequencer would position without queuing, and now
 * fails instead: its feed reads go on with what this release positioned). What an earlier release writes (events and
 * deliveries) is queued when this release positions it. Its claims, records and redeliveries fail (the function and
 * the lease columns are gone) until it is replaced: nothing is lost, its claims run out and are sent by this release.
 * The migration locks `deliveries` while it runs (one transaction): on a large table, run it at a quiet moment.
 */
export class Migration20261129100000_delivery_queue extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create table delivery_queue (
  delivery_id uuid primary key,
  event_id uuid not null,
  endpoint_id uuid not null,
  order_id text collate "C",
  position bigint not null,
  attempts integer not null,
  next_attempt_at timestamptz not null,
  created_at timestamptz not null,
  lease_until timestamptz,
  claim_token uuid
) with (fillfactor = 50);
create index delivery_queue_due_idx on delivery_queue (next_attempt_at, position);
create index delivery_queue_order_idx on delivery_queue (endpoint_id, order_id, position) where order_id is not null;

alter sequence events_position_seq rename to event_feed_position_seq;

alter table deliveries add column failed_at timestamptz;
update deliveries set failed_at = updated_at where status = 'failed';
alter table deliveries add constraint deliveries_failed_at_whole check ((failed_at is not null) = (status = 'failed'));
create index deliveries_endpoint_failed_idx on deliveries (endpoint_id, created_at desc, seq desc) where failed_at is not null;
drop index if exists deliveries_endpoint_unfinished_idx;
drop index if exists deliveries_due_idx;
drop index if exists deliveries_order_idx;
alter table deliveries drop constraint if exists deliveries_seq_key;

-- One round of the feed's sequencer, for a caller that holds its lock: up to p_limit committed events without a
-- position get one, in seq order, and the pending deliveries of those events enter the queue with it.
create function sequence_events(p_limit integer) returns integer language plpgsql as $$
declare
  positioned_count integer;
begin
  with batch as (
    select id from events where position is null and endpoint_id is not null order by seq limit p_limit),
  numbered as (
    select id, nextval('event_feed_position_seq') as position from batch),
  positioned as (
    update events e set position = n.position from numbered n where e.id = n.id and e.position is null
    returning e.id, e.position),
  queued as (
    insert into delivery_queue (delivery_id, event_id, endpoint_id, order_id, position, attempts, next_attempt_at, created_at)
    select d.id, d.event_id, d.endpoint_id, d.order_id, p.position, d.attempts, d.next_attempt_at, d.created_at
    from positioned p join deliveries d on d.event_id = p.id
    where d.status = 'pending'
    on conflict (delivery_id) do nothing)
  select count(*)::int into positioned_count from positioned;
  return positioned_count;
end
$$;

-- The sender's claim, in one statement: when p_sequence > 0 (new deliveries may have been committed), a round of the
-- sequencer first (under its lock, taken here and held to the end of the claim, so that every statement below sees the
-- positions it gave; a claim without it needs no lock: a round still under way elsewhere only adds later positions),
-- then up to p_limit due deliveries nobody holds, each until p_lease_until, oldest first:
-- - a delivery waits while an earlier feed position of its endpoint and order is queued (being sent or waiting for its
--   retry);
-- - this sender holds at most p_per_endpoint deliveries of one endpoint: p_held names the endpoints it holds some of
--   already, with how many (p_held_counts); a full one is passed over, so its backlog takes nobody's turn.
-- Each plpgsql statement takes a snapshot of its own, after the lock: a claim sees every event committed before it.
-- Unless it positioned events, it commits without waiting for the WAL's flush (set_config's local setting lasts to the
-- statement's commit).
create function claim_deliveries(p_now timestamptz, p_lease_until timestamptz, p_limit integer, p_token uuid,
  p_per_endpoint integer, p_held uuid[], p_held_counts integer[], p_sequence integer)
returns table (id uuid, event_id uuid, endpoint_id uuid, attempts integer, body text, has_endpoint boolean, url text,
  signature_key text, enabled boolean, created_at timestamptz, previous_signature_key text, previous_key_expires_at timestamptz)
language plpgsql set enable_bitmapscan = off as $$
declare
  full_endpoints uuid[];
  positioned integer := 0;
begin
  if p_sequence > 0 then
    perform pg_advisory_xact_lock(${SEQUENCER_LOCK});
    positioned := sequence_events(p_sequence);
  end if;
  -- A claim lost in a crash is a lease that never was: the delivery is claimed again (at least once holds). Feed
  -- positions are not to be lost once a reader may have seen them: a claim that gave some commits as usual.
  if positioned = 0 then
    perform set_config('synchronous_commit', 'off', true);
  end if;
  select coalesce(array_agg(h.endpoint_id), '{}') into full_endpoints
  from unnest(p_held, p_held_counts) as h(endpoint_id, n) where h.n >= p_per_endpoint;
  return query
  with candidates as (
    select q.delivery_id, q.endpoint_id, q.next_attempt_at, q.position from delivery_queue q
    where q.next_attempt_at <= p_now and (q.lease_until is null or q.lease_until <= p_now)
      and q.endpoint_id <> all (full_endpoints)
      and not exists (
        select 1 from delivery_queue o
        where o.endpoint_id = q.endpoint_id and o.order_id = q.order_id and o.position < q.position)
    order by q.next_attempt_at, q.position
    limit 4 * p_limit),
  ranked as (
    select c.*, row_number() over (partition by c.endpoint_id order by c.next_attempt_at, c.position) as nth
    from candidates c),
  room as (
    select r.delivery_id, r.next_attempt_at, r.position from ranked r
    left join unnest(p_held, p_held_counts) as h(endpoint_id, n) on h.endpoint_id = r.endpoint_id
    where r.nth <= p_per_endpoint - coalesce(h.n, 0)),
  due as (
    select q.delivery_id from delivery_queue q join room r on r.delivery_id = q.delivery_id
    where q.next_attempt_at <= p_now and (q.lease_until is null or q.lease_until <= p_now)
    order by r.next_attempt_at, r.position
    limit p_limit
    for update of q skip locked),
  claimed as (
    update delivery_queue q set lease_until = p_lease_until, claim_token = p_token from due where q.delivery_id = due.delivery_id
    returning q.delivery_id, q.event_id, q.endpoint_id, q.attempts, q.created_at, q.position)
  select c.delivery_id, c.event_id, c.endpoint_id, c.attempts, e.payload::text, w.id is not null, w.url, w.signature_key, w.enabled,
    c.created_at, w.previous_signature_key, w.previous_key_expires_at
  from claimed c join events e on e.id = c.event_id left join webhook_configs w on w.id = c.endpoint_id
  order by c.position;
end
$$;

drop function if exists claim_due_deliveries(timestamptz, timestamptz, integer, uuid);
drop function if exists claim_due_deliveries_v2(timestamptz, timestamptz, integer, uuid);
drop function if exists claim_due_deliveries_v3(timestamptz, timestamptz, integer, uuid);

-- What is pending now enters the queue: with its event's position, or (not yet positioned) by the round below.
select pg_advisory_xact_lock(${SEQUENCER_LOCK});
-- A delivery an earlier release is sending keeps its lease: it is not sent again before the lease runs out.
insert into delivery_queue (delivery_id, event_id, endpoint_id, order_id, position, attempts, next_attempt_at, created_at, lease_until, claim_token)
select d.id, d.event_id, d.endpoint_id, d.order_id, e.position, d.attempts, d.next_attempt_at, d.created_at, d.lease_until, d.claim_token
from deliveries d join events e on e.id = d.event_id
where d.status = 'pending' and e.position is not null;
select sequence_events(2147483647);

alter table deliveries drop column lease_until, drop column claim_token;
`);
  }
}
