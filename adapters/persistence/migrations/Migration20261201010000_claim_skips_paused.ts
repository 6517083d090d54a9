import { Migration } from '@mikro-orm/migrations';

/**
 * An endpoint disabled, by its integrator or for failing, or left without a URL, keeps its pending deliveries as
 * they are (CONTRACT §11): no claim hands them out until it is enabled with a URL again, and they then go on where
 * they were. claim_deliveries_v4 (migration 20261201000000) handed them out, and each ended `failed` at once without
 * a request.
 *
 * The queue's rows carry their endpoint's state (`paused`, kept by two triggers, and set right by
 * settle_paused_flags where a race left one wrong), and the indexes of due rows hold only the others: a paused
 * backlog, however long and for however many days, is never in a claim's way (looked up at the claim, it would fill
 * the head of due rows and send every claim through the per-endpoint step). claim_deliveries_v5 is v4 on that index,
 * with the endpoints it looks at checked as well (a row a concurrent change passed over). A delivery whose endpoint
 * is gone is still handed out, and fails. v4 stays for the processes of the version before, which fail paused
 * deliveries as before while they run (their claims, on neither partial index, sort the queue).
 */
export class Migration20261201010000_claim_skips_paused extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
set local lock_timeout = '5s';
alter table delivery_queue add column paused boolean not null default false;
update delivery_queue q set paused = true from webhook_configs w
where w.id = q.endpoint_id and not (w.enabled and coalesce(w.url, '') <> '');
create index delivery_queue_due_open_idx on delivery_queue (next_attempt_at, position) where not paused;
drop index delivery_queue_due_idx;
create index delivery_queue_endpoint_open_idx on delivery_queue (endpoint_id, next_attempt_at, position)
  where not paused;
drop index delivery_queue_endpoint_due_idx;
create index delivery_queue_paused_idx on delivery_queue (endpoint_id) where paused;

-- A row is flagged as it is queued, from its endpoint as it stands.
create function delivery_queue_paused_as_queued() returns trigger language plpgsql as $$
begin
  new.paused := exists (
    select 1 from webhook_configs w where w.id = new.endpoint_id and not (w.enabled and coalesce(w.url, '') <> ''));
  return new;
end
$$;
create trigger delivery_queue_paused_as_queued before insert on delivery_queue
  for each row execute function delivery_queue_paused_as_queued();

-- An endpoint's rows follow it as it is disabled or enabled, or loses or gets a URL. Either way a row another
-- transaction holds is passed over (a record under way holds its rows, and would wait for this endpoint's row next:
-- the two would deadlock), as is a row queued by a transaction that has not committed yet, which read the endpoint
-- before this change: settle_paused_flags, run by the retention round, sets such rows right. Meanwhile the claim checks
-- the endpoint of what it looks at, so a row still unflagged is not handed out.
create function webhook_config_pauses_queue() returns trigger language plpgsql as $$
declare
  now_paused boolean := not (new.enabled and coalesce(new.url, '') <> '');
begin
  if now_paused then
    update delivery_queue q set paused = true
    where q.delivery_id in (
      select o.delivery_id from delivery_queue o where o.endpoint_id = new.id and not o.paused for update skip locked);
  else
    update delivery_queue q set paused = false
    where q.delivery_id in (
      select o.delivery_id from delivery_queue o where o.endpoint_id = new.id and o.paused for update skip locked);
  end if;
  return null;
end
$$;
create trigger webhook_config_pauses_queue after update of enabled, url on webhook_configs
  for each row when (
    (old.enabled and coalesce(old.url, '') <> '') is distinct from (new.enabled and coalesce(new.url, '') <> ''))
  execute function webhook_config_pauses_queue();

-- The rows whose flag says otherwise than their endpoint (those the triggers passed over, or queued by a transaction
-- that read the endpoint before a change), set right, from the endpoints' side: a look into each endpoint's rows of the
-- wrong kind, on the partial index of that kind. Answers how many. Rows another transaction holds, and endpoints being
-- changed (their rows wait for the change's own trigger), wait for the next round; an endpoint whose change committed
-- after this statement began is read again as it locks it.
create function settle_paused_flags() returns integer language plpgsql as $$
declare
  n_resumed integer;
  n_paused integer;
begin
  update delivery_queue q set paused = false
  where q.delivery_id in (
    select o.delivery_id from webhook_configs w
      cross join lateral (
        select x.delivery_id from delivery_queue x where x.endpoint_id = w.id and x.paused
        for update skip locked) o
    where w.enabled and coalesce(w.url, '') <> ''
    for share of w skip locked);
  get diagnostics n_resumed = row_count;
  update delivery_queue q set paused = true
  where q.delivery_id in (
    select o.delivery_id from webhook_configs w
      cross join lateral (
        select x.delivery_id from delivery_queue x where x.endpoint_id = w.id and not x.paused
        for update skip locked) o
    where not (w.enabled and coalesce(w.url, '') <> '')
    for share of w skip locked);
  get diagnostics n_paused = row_count;
  return n_resumed + n_paused;
end
$$;

create function claim_deliveries_v5(p_now timestamptz, p_lease_until timestamptz, p_limit integer, p_token uuid,
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
    where q.next_attempt_at <= p_now and not q.paused
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
      order by q.endpoint_id limit 1)
    union all
    select (
      select q.endpoint_id from delivery_queue q where q.endpoint_id > e.endpoint_id and not q.paused
      order by q.endpoint_id limit 1)
    from queued e where e.endpoint_id is not null),
  spread as (
    select c.* from queued e
    left join held h on h.endpoint_id = e.endpoint_id
    cross join lateral (
      select q.delivery_id, q.endpoint_id, q.next_attempt_at, q.position from delivery_queue q
      where q.endpoint_id = e.endpoint_id and q.next_attempt_at <= p_now and not q.paused
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
