import { Migration } from '@mikro-orm/migrations';

/**
 * The trace context (CONTRACT §13) kept with what a request causes later, in other processes: a command's, from the
 * request that sent it, and an event's, from the work that wrote it (W3C `traceparent`; null when tracing was off).
 * claim_deliveries_v3 is v2 (migration 20261130010000) answering each delivery's event's as well; v2 stays for the
 * processes of the version before, while they are replaced.
 */
export class Migration20261130020000_trace_context extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
set local lock_timeout = '5s';
alter table commands add column traceparent text;
alter table events add column traceparent text;

create function claim_deliveries_v3(p_now timestamptz, p_lease_until timestamptz, p_limit integer, p_token uuid,
  p_per_endpoint integer, p_held uuid[], p_held_counts integer[], p_sequence integer)
  returns table(id uuid, event_id uuid, endpoint_id uuid, attempts integer, body text, created_at timestamptz, endpoint json,
    traceparent text)
  language plpgsql set enable_bitmapscan to 'off' as $$
declare
  full_endpoints uuid[];
  positioned integer := 0;
begin
  if p_sequence > 0 then
    perform pg_advisory_xact_lock(1885497649);
    positioned := sequence_events(p_sequence);
  end if;
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
