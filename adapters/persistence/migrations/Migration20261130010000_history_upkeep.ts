import { Migration } from '@mikro-orm/migrations';

/**
 * What keeps the partitioned history (migration 20261130000000): the days ahead made before they come, the days past
 * retention dropped whole, and the feed's sequencer and the delivery claim reading the history by its full key.
 */
// The partitions of the history as ranges: a lower bound of MINVALUE reads as null. Range bounds print as
// FOR VALUES FROM (...) TO (...), and the default partition as DEFAULT (it has no range, and is left out). The bounds
// print in the session's DateStyle and time zone: the functions below read them with ISO and UTC set.
const PARTITIONS_VIEW = `
create view history_partitions as
  select p.relname::text as parent, c.relname::text as name,
    nullif((regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''?([^'')]+)''?\\)'))[1], 'MINVALUE')::timestamptz as lower,
    (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz as upper
  from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
  where p.relname in ('events', 'deliveries', 'delivery_attempts') and pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT';
`;

// Makes the day partitions of [p_from's day, p_days later) that are missing, a day's three at once. A day some rows
// already wait for in a default partition is left to it (attaching would have to move them): the row purge takes those
// in time. A partition is made apart and then attached: the parent stays open to reads and writes, and only the
// default partition is locked, to be checked. Days are UTC days whatever the session's time zone, and the bounds are
// read in ISO whatever its DateStyle. A lock not had within 200 ms (before PostgreSQL's deadlock check, at 1 s) leaves
// that day for the next round.
const ENSURE = `
create function history_partitions_ahead(p_from timestamptz, p_days integer) returns integer language plpgsql
  set lock_timeout = '200ms' set timezone = 'UTC' set datestyle = 'ISO, YMD' as $$
declare
  made integer := 0;
  day timestamptz;
  v_parent text;
  v_part text;
begin
  for i in 0 .. p_days - 1 loop
    day := date_trunc('day', p_from) + make_interval(days => i);
    begin
      foreach v_parent in array array['events', 'deliveries', 'delivery_attempts'] loop
        v_part := v_parent || '_p' || to_char(day, 'YYYYMMDD');
        continue when exists (select 1 from history_partitions h where h.parent = v_parent
          and (h.lower is null or h.lower < day + interval '1 day') and h.upper > day);
        execute format('create table %I (like %I including defaults including constraints)%s', v_part, v_parent,
          case v_parent when 'deliveries' then ' with (fillfactor = 70)' else '' end);
        execute format('alter table %I attach partition %I for values from (%L) to (%L)', v_parent, v_part, day,
          day + interval '1 day');
        made := made + 1;
      end loop;
    exception when check_violation or lock_not_available or deadlock_detected then
      -- Rows of that day are in a default partition already, or a table is busy: the day is left as it is.
      null;
    end;
  end loop;
  return made;
end
$$;
`;

// Drops the oldest day that ended before p_before, whole, in all three tables at once, once it holds no delivery still
// to be sent (every pending delivery of a positioned event is in delivery_queue) and no event the feed has yet to
// number: 1, or 0 when no day can go. The feed's purge horizon moves to the highest position dropped (CONTRACT §10: a
// cursor before a purged event is GONE), read before any lock (a past day's positions are final once none is
// missing). A drop locks the parents (a partition's drop changes them) and the day's partitions, then checks again: a
// redelivery may have committed meanwhile (then -1: the next round looks again, and the row purge waits for it). A lock
// not had within 200 ms, before PostgreSQL's deadlock check (1 s), gives up (-1) too, so that the drop never becomes
// the reason another transaction fails.
const DROP = `
create function drop_history_days(p_before timestamptz) returns integer language plpgsql
  set lock_timeout = '200ms' set timezone = 'UTC' set datestyle = 'ISO, YMD' as $$
declare
  d record;
  part record;
  endpoints uuid[];
  positions bigint[];
begin
  for d in select coalesce(h.lower, '-infinity') as lower, h.lower as bound, h.upper from history_partitions h
      where h.parent = 'events' and h.upper <= p_before order by h.upper loop
    continue when exists (select 1 from delivery_queue q where q.created_at >= d.lower and q.created_at < d.upper)
      or exists (select 1 from events x where x.created_at >= d.lower and x.created_at < d.upper
        and x.position is null and x.endpoint_id is not null);
    select coalesce(array_agg(x.endpoint_id), '{}'), coalesce(array_agg(x.position), '{}') into endpoints, positions
    from (select endpoint_id, max(position) as position from events
          where created_at >= d.lower and created_at < d.upper and position is not null and endpoint_id is not null
          group by endpoint_id) x;
    begin
      lock table events, deliveries, delivery_attempts in access exclusive mode;
      if exists (select 1 from delivery_queue q where q.created_at >= d.lower and q.created_at < d.upper)
        or exists (select 1 from events x where x.created_at >= d.lower and x.created_at < d.upper
          and x.position is null and x.endpoint_id is not null) then
        return -1;
      end if;
      insert into event_feed_purged (endpoint_id, position)
        select * from unnest(endpoints, positions)
        on conflict (endpoint_id) do update set position = greatest(event_feed_purged.position, excluded.position);
      for part in select h.name from history_partitions h where h.upper = d.upper
          and h.lower is not distinct from d.bound loop
        execute format('drop table %I', part.name);
      end loop;
      return 1;
    exception when lock_not_available or deadlock_detected then
      return -1;
    end;
  end loop;
  return 0;
end
$$;
`;

// The sequencer and the claim as migrations 20261129100000 and 20261129120000 made them, each of their reads of the
// history by key now naming the event's time as well: a read by id alone would look into every partition.
const KEYED_FUNCTIONS = `
create or replace function sequence_events(p_limit integer) returns integer
  language plpgsql as $$
declare
  positioned_count integer;
begin
  with batch as (
    select id, created_at from events where position is null and endpoint_id is not null order by seq limit p_limit),
  numbered as (
    select id, created_at, nextval('event_feed_position_seq') as position from batch),
  positioned as (
    update events e set position = n.position from numbered n
    where e.id = n.id and e.created_at = n.created_at and e.position is null
    returning e.id, e.created_at, e.position),
  queued as (
    insert into delivery_queue (delivery_id, event_id, endpoint_id, order_id, position, attempts, next_attempt_at, created_at)
    select d.id, d.event_id, d.endpoint_id, d.order_id, p.position, d.attempts, d.next_attempt_at, d.created_at
    from positioned p join deliveries d on d.event_id = p.id and d.created_at = p.created_at
    where d.status = 'pending'
    on conflict (delivery_id) do nothing)
  select count(*)::int into positioned_count from positioned;
  return positioned_count;
end
$$;

create or replace function claim_deliveries_v2(p_now timestamptz, p_lease_until timestamptz, p_limit integer, p_token uuid,
  p_per_endpoint integer, p_held uuid[], p_held_counts integer[], p_sequence integer)
  returns table(id uuid, event_id uuid, endpoint_id uuid, attempts integer, body text, created_at timestamptz, endpoint json)
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
  select c.delivery_id, c.event_id, c.endpoint_id, c.attempts, e.payload::text, c.created_at, to_json(w)
  from claimed c join events e on e.id = c.event_id and e.created_at = c.created_at
    left join webhook_configs w on w.id = c.endpoint_id
  order by c.position;
end
$$;
`;

export class Migration20261130010000_history_upkeep extends Migration {
  override async up(): Promise<void> {
    this.addSql(PARTITIONS_VIEW);
    this.addSql(ENSURE);
    this.addSql(DROP);
    this.addSql(KEYED_FUNCTIONS);
    this.addSql('select history_partitions_ahead(now(), 3);');
  }
}
