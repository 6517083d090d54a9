import { Migration } from '@mikro-orm/migrations';

const SEQUENCER_LOCK = 0x7062_6931;

/**
 * An order's later deliveries wait out of the claim's way. Per-order order (CONTRACT §7) holds each order's deliveries
 * to an endpoint behind its first; claim_deliveries_v5 found them blocked only as it walked them, so a failing
 * endpoint's orders with several events each (the first backing off, the others due and older than any other tenant's
 * new events) filled the head of due rows, and every claim walked all of them: 2.7 ms a claim beside none, 30 ms beside
 * 1,000 (bench/claims-behind-blocked.ts). Now a queued row says whether an earlier one of its order waits (`blocked`),
 * the indexes of due rows hold only the others, and claim_deliveries_v6 is v5 on them (each candidate still checked
 * for an earlier row: a flag set wrong by what no lock orders costs order nothing, only a probe).
 *
 * Who sets the flag, and why it cannot be left set for ever:
 * - a row is blocked as it is queued when an earlier row of its order is there, and later rows of its order (a
 *   redelivery queues an old position) are blocked behind it, unless another transaction holds them (a claim or a
 *   record under way: the claim's own check for an earlier row keeps their order);
 * - when an order's unblocked row leaves the queue, the order's first remaining row that no other transaction holds
 *   is unblocked (one leaving at the same time is passed over for the one after it).
 * A row queued while its order's first leaves would be missed by both: the queuer reads the first as still there,
 * the leaver does not see the new row. So the sequencer (it holds its lock, exclusive, through every round) and the
 * leaver (shared) take the sequencer's lock before they look: the later of the two reads what the earlier committed
 * (each statement of a plpgsql function takes a snapshot of its own). A leaver waits for nothing but that lock: a
 * record has locked its rows and its endpoints' rows by then, and waiting for a row as well could close a cycle with
 * another record. A redelivery does not take the lock: it would hold it while it waits for a row a record holds.
 * What these leave wrong (a row queued by a redelivery as its order's first leaves, a next row another transaction
 * held as its first left) settle_order_heads sets right, run by the retention round beside settle_paused_flags;
 * meanwhile the claim's check keeps the order.
 *
 * The indexes of due rows claim_deliveries_v5 used go: processes of the version before sort the queue for their
 * claims while they run, as v4's did after migration 20261201010000.
 */
export class Migration20261202000000_order_heads extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
set local lock_timeout = '5s';
lock table delivery_queue in share row exclusive mode;
alter table delivery_queue add column blocked boolean not null default false;
update delivery_queue q set blocked = true where q.order_id is not null and exists (
  select 1 from delivery_queue o
  where o.endpoint_id = q.endpoint_id and o.order_id = q.order_id and o.position < q.position);
create index delivery_queue_due_head_idx on delivery_queue (next_attempt_at, position) where not paused and not blocked;
drop index delivery_queue_due_open_idx;
create index delivery_queue_endpoint_head_idx on delivery_queue (endpoint_id, next_attempt_at, position)
  where not paused and not blocked;
drop index delivery_queue_endpoint_open_idx;

create function delivery_queue_blocked_as_queued() returns trigger language plpgsql as $$
begin
  if new.order_id is not null then
    new.blocked := exists (
      select 1 from delivery_queue o
      where o.endpoint_id = new.endpoint_id and o.order_id = new.order_id and o.position < new.position);
  end if;
  return new;
end
$$;
create trigger delivery_queue_blocked_as_queued before insert on delivery_queue
  for each row execute function delivery_queue_blocked_as_queued();

-- After the statement's rows are all in (one statement may queue an order's rows in any order).
create function delivery_queue_blocks_later() returns trigger language plpgsql as $$
begin
  update delivery_queue q set blocked = true
  where q.delivery_id in (
    select o.delivery_id from delivery_queue o
    where o.endpoint_id = new.endpoint_id and o.order_id = new.order_id and o.position > new.position and not o.blocked
    for update skip locked);
  return null;
end
$$;
create trigger delivery_queue_blocks_later after insert on delivery_queue
  for each row when (new.order_id is not null) execute function delivery_queue_blocks_later();

create function delivery_queue_unblocks_next() returns trigger language plpgsql as $$
declare
  next_id uuid;
  next_blocked boolean;
begin
  perform pg_advisory_xact_lock_shared(${SEQUENCER_LOCK});
  select o.delivery_id, o.blocked into next_id, next_blocked from delivery_queue o
  where o.endpoint_id = old.endpoint_id and o.order_id = old.order_id order by o.position limit 1
  for no key update skip locked;
  if next_blocked then
    update delivery_queue set blocked = false where delivery_id = next_id;
  end if;
  return null;
end
$$;
create trigger delivery_queue_unblocks_next after delete on delivery_queue
  for each row when (old.order_id is not null and not old.blocked) execute function delivery_queue_unblocks_next();

-- The flags that say otherwise than the queue, set right: an order's first row blocked, or a later one not. Rows
-- another transaction holds wait for the next round. Answers how many.
create function settle_order_heads() returns integer language plpgsql as $$
declare
  n_unblocked integer;
  n_blocked integer;
begin
  perform pg_advisory_xact_lock_shared(${SEQUENCER_LOCK});
  update delivery_queue q set blocked = false
  where q.delivery_id in (
    select x.delivery_id from delivery_queue x
    where x.blocked and not exists (
      select 1 from delivery_queue o
      where o.endpoint_id = x.endpoint_id and o.order_id = x.order_id and o.position < x.position)
    for update skip locked);
  get diagnostics n_unblocked = row_count;
  update delivery_queue q set blocked = true
  where q.delivery_id in (
    select x.delivery_id from delivery_queue x
    where not x.blocked and x.order_id is not null and exists (
      select 1 from delivery_queue o
      where o.endpoint_id = x.endpoint_id and o.order_id = x.order_id and o.position < x.position)
    for update skip locked);
  get diagnostics n_blocked = row_count;
  return n_unblocked + n_blocked;
end
$$;

create function claim_deliveries_v6(p_now timestamptz, p_lease_until timestamptz, p_limit integer, p_token uuid,
  p_per_endpoint integer, p_held uuid[], p_held_counts integer[], p_sequence integer)
  returns table(id uuid, event_id uuid, endpoint_id uuid, attempts integer, body text, created_at timestamptz,
    endpoint json, traceparent text)
  language plpgsql set enable_bitmapscan to 'off' set jit to 'off' as $$
declare
  positioned integer := 0;
begin
  if p_sequence > 0 then
    perform pg_advisory_xact_lock(1885497649);
    positioned := sequence_events(p_sequence);
  end if;
  if positioned = 0 then
    perform set_config('synchronous_commit', 'off', true);
  end if;
  return query
  with recursive held as (
    select h.endpoint_id, h.n from unnest(p_held, p_held_counts) as h(endpoint_id, n)),
  -- The oldest due rows, at most 4 * p_limit of them looked at: where a claim finds its work, unless one endpoint's
  -- backlog fills them.
  head as (
    select q.delivery_id, q.endpoint_id, q.order_id, q.next_attempt_at, q.position, q.lease_until from delivery_queue q
    where q.next_attempt_at <= p_now and not q.paused and not q.blocked
    order by q.next_attempt_at, q.position
    limit 4 * p_limit),
  -- Endpoints of the head that are disabled or have no URL, whose rows a concurrent change left unflagged: what they
  -- have waiting is left as it is (CONTRACT §11) all the same.
  paused as (
    select w.id from webhook_configs w
    where w.id in (select h.endpoint_id from head h) and not (w.enabled and coalesce(w.url, '') <> '')),
  head_open as (
    select h.delivery_id, h.endpoint_id, h.next_attempt_at, h.position from head h
    where (h.lease_until is null or h.lease_until <= p_now)
      and not exists (select 1 from paused p where p.id = h.endpoint_id)
      and not exists (select 1 from held f where f.endpoint_id = h.endpoint_id and f.n >= p_per_endpoint)
      and not exists (
        select 1 from delivery_queue o
        where o.endpoint_id = h.endpoint_id and o.order_id = h.order_id and o.position < h.position)),
  head_room as (
    select r.* from (
      select c.*, row_number() over (partition by c.endpoint_id order by c.next_attempt_at, c.position) as nth
      from head_open c) r
    left join held h on h.endpoint_id = r.endpoint_id
    where r.nth <= p_per_endpoint - coalesce(h.n, 0)),
  -- When the head was cut short and left room: every endpoint in the queue, each looked into on its own (its index),
  -- so that what one endpoint has waiting, however much, costs the others nothing.
  spread_needed as (
    select (select count(*) from head) = 4 * p_limit and (select count(*) from head_room) < p_limit as yes),
  queued(endpoint_id) as (
    (select q.endpoint_id from delivery_queue q where (select yes from spread_needed) and not q.paused
      and not q.blocked order by q.endpoint_id limit 1)
    union all
    select (
      select q.endpoint_id from delivery_queue q where q.endpoint_id > e.endpoint_id and not q.paused
        and not q.blocked order by q.endpoint_id limit 1)
    from queued e where e.endpoint_id is not null),
  spread as (
    select c.* from queued e
    left join held h on h.endpoint_id = e.endpoint_id
    cross join lateral (
      select q.delivery_id, q.endpoint_id, q.next_attempt_at, q.position from delivery_queue q
      where q.endpoint_id = e.endpoint_id and q.next_attempt_at <= p_now and not q.paused and not q.blocked
        and (q.lease_until is null or q.lease_until <= p_now)
        and not exists (
          select 1 from delivery_queue o
          where o.endpoint_id = q.endpoint_id and o.order_id = q.order_id and o.position < q.position)
      order by q.next_attempt_at, q.position
      limit least(p_per_endpoint - coalesce(h.n, 0), p_limit)) c
    where e.endpoint_id is not null and coalesce(h.n, 0) < p_per_endpoint
      and not exists (
        select 1 from webhook_configs w where w.id = e.endpoint_id and not (w.enabled and coalesce(w.url, '') <> ''))),
  candidates as (
    select r.delivery_id, r.next_attempt_at, r.position from (
      select u.*, row_number() over (partition by u.endpoint_id order by u.next_attempt_at, u.position) as nth
      from (select hr.delivery_id, hr.endpoint_id, hr.next_attempt_at, hr.position from head_room hr
            union
            select s.delivery_id, s.endpoint_id, s.next_attempt_at, s.position from spread s) u) r
    left join held h on h.endpoint_id = r.endpoint_id
    where r.nth <= p_per_endpoint - coalesce(h.n, 0)
    order by r.next_attempt_at, r.position
    -- As many again as a claim takes, and more: what a claim beside this one has locked is skipped below.
    limit 4 * p_limit),
  due as (
    select q.delivery_id from delivery_queue q join candidates r on r.delivery_id = q.delivery_id
    where q.next_attempt_at <= p_now and (q.lease_until is null or q.lease_until <= p_now)
    order by r.next_attempt_at, r.position
    limit p_limit
    for update of q skip locked),
  claimed as (
    update delivery_queue q set lease_until = p_lease_until, claim_token = p_token
    from due where q.delivery_id = due.delivery_id
    returning q.delivery_id, q.event_id, q.endpoint_id, q.attempts, q.created_at, q.position)
  select c.delivery_id, c.event_id, c.endpoint_id, c.attempts, e.payload::text, c.created_at, to_json(w), e.traceparent
  from claimed c join events e on e.id = c.event_id and e.created_at = c.created_at
    left join webhook_configs w on w.id = c.endpoint_id
  order by c.position;
end
$$;
`);
  }
}
