import { Migration } from '@mikro-orm/migrations';

/**
 * No endpoint's backlog slows another's claim (CONTRACT §7, "with any backlog"). claim_deliveries_v3 (migration
 * 20261130020000) walked the queue's due rows oldest first until it had 4 claims' worth that passed its filters:
 * the rows of an endpoint whose share was full (a silent one, with this process's sends on it) were walked and passed
 * over in every claim, 15 ms a claim behind 100,000 of them, and one whose share was free took the whole window, so
 * that a claim handed out its deliveries alone.
 *
 * claim_deliveries_v4 looks at no more than 4 claims' worth of the oldest due rows; when those were cut short and left
 * room, it looks into every endpoint in the queue on its own, by a new index (endpoint, due time, position), for its
 * share: a cost of the number of endpoints queued, not of what one has waiting (2 ms behind the same 100,000). The rest
 * is v3's: per-order order by feed position, SKIP LOCKED, a lease and a token, a share per endpoint. v3 stays for the
 * processes of the version before, while they are replaced.
 */
export class Migration20261201000000_claim_by_endpoint extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
set local lock_timeout = '5s';
create index delivery_queue_endpoint_due_idx on delivery_queue (endpoint_id, next_attempt_at, position);
create function claim_deliveries_v4(p_now timestamptz, p_lease_until timestamptz, p_limit integer, p_token uuid,
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
    where q.next_attempt_at <= p_now
    order by q.next_attempt_at, q.position
    limit 4 * p_limit),
  head_open as (
    select h.delivery_id, h.endpoint_id, h.next_attempt_at, h.position from head h
    where (h.lease_until is null or h.lease_until <= p_now)
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
    (select q.endpoint_id from delivery_queue q where (select yes from spread_needed) order by q.endpoint_id limit 1)
    union all
    select (
      select q.endpoint_id from delivery_queue q where q.endpoint_id > e.endpoint_id order by q.endpoint_id limit 1)
    from queued e where e.endpoint_id is not null),
  spread as (
    select c.* from queued e
    left join held h on h.endpoint_id = e.endpoint_id
    cross join lateral (
      select q.delivery_id, q.endpoint_id, q.next_attempt_at, q.position from delivery_queue q
      where q.endpoint_id = e.endpoint_id and q.next_attempt_at <= p_now
        and (q.lease_until is null or q.lease_until <= p_now)
        and not exists (
          select 1 from delivery_queue o
          where o.endpoint_id = q.endpoint_id and o.order_id = q.order_id and o.position < q.position)
      order by q.next_attempt_at, q.position
      limit least(p_per_endpoint - coalesce(h.n, 0), p_limit)) c
    where e.endpoint_id is not null and coalesce(h.n, 0) < p_per_endpoint),
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
