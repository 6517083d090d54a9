import { Migration } from '@mikro-orm/migrations';

const SEQUENCER_LOCK = 0x7062_6931;

/**
 * The queue's flags (`paused`, migration 20261201010000; `blocked`, 20261202000000) kept by one trigger call per
 * statement instead of three per queued row and one per row that leaves. A sequencing round queues up to a thousand
 * deliveries in one statement, and each paid two BEFORE and one AFTER plpgsql call: 57 µs a row queued against 39 µs
 * now, and 9-14 against about 8 µs a row that leaves (EXPLAIN ANALYZE of 20,000 rows queued and 10,000 leaving, in
 * rolled-back transactions, alternated), which is PostgreSQL's CPU in every delivery (docs/BENCHMARKS.md).
 *
 * The rules are the same, set-based on the statement's rows (its transition table), and run where the row triggers'
 * AFTER half ran, at the end of the statement, with a snapshot of their own taken under the same locks:
 * - a row queued behind an earlier row of its order (in the queue, or queued by the same statement) is blocked, and
 *   rows of its order queued after it (a redelivery queues an old position) are blocked too, unless another
 *   transaction holds them; a row queued for an endpoint disabled or without a URL is paused;
 * - when unblocked rows of an order leave, its first remaining row that no other transaction holds is unblocked, under
 *   the sequencer's lock taken shared (see migration 20261202000000 for why).
 * A row is now written twice when it is queued blocked or paused (inserted, then flagged): those wait anyway, and
 * the common row, neither, is written once and checked by two index probes instead of three function calls. The
 * functions allow no plan but index probes in a nested loop: PL/pgSQL keeps a statement's first plan for the
 * connection, and one made for a large first batch (a hash join over the whole index of orders) cost a later one-row
 * redelivery 77 ms where the probes cost 0.1 ms (a review's measurement, 250,000 rows queued).
 *
 * settle_order_heads, the sweep of the blocked flags a race left wrong, reads the queue once, in the order of its
 * index of orders, instead of twice with a probe for each row: 0.51 against 1.71 s for 300,000 rows queued, 200,000 of
 * them blocked, nothing to set right (EXPLAIN ANALYZE of its query against the function before, on a bench database).
 * What it finds wrong it looks up by key (a hash join, planned for every row of the queue, built two hashes of the
 * whole queue for one wrong flag). Its rows are judged from one snapshot: one whose order's first left during the pass
 * may be flagged behind it until the next sweep, as with the two passes before (the claim's own check keeps the
 * order either way).
 */
export class Migration20261202010000_queue_flags_per_statement extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
set local lock_timeout = '5s';

create function delivery_queue_flags_as_queued() returns trigger language plpgsql
  set enable_seqscan to off set enable_bitmapscan to off set enable_hashjoin to off set enable_mergejoin to off
  set jit to off as $$
begin
  if not exists (select 1 from queued) then
    return null;
  end if;
  update delivery_queue q set blocked = true
  where q.delivery_id in (
    select n.delivery_id from queued n
    where n.order_id is not null and exists (
      select 1 from delivery_queue e
      where e.endpoint_id = n.endpoint_id and e.order_id = n.order_id and e.position < n.position));
  update delivery_queue q set blocked = true
  where q.delivery_id in (
    select x.delivery_id from queued n cross join lateral (
      select o.delivery_id from delivery_queue o
      where o.endpoint_id = n.endpoint_id and o.order_id = n.order_id and o.position > n.position and not o.blocked
      for update skip locked) x
    where n.order_id is not null);
  update delivery_queue q set paused = true
  where q.delivery_id in (
    select n.delivery_id from queued n join webhook_configs w on w.id = n.endpoint_id
    where not (w.enabled and coalesce(w.url, '') <> ''));
  return null;
end
$$;

create function delivery_queue_unblocks_next_of_leavers() returns trigger language plpgsql
  set enable_seqscan to off set enable_bitmapscan to off set enable_hashjoin to off set enable_mergejoin to off
  set jit to off as $$
begin
  if not exists (select 1 from leaving l where l.order_id is not null and not l.blocked) then
    return null;
  end if;
  perform pg_advisory_xact_lock_shared(${SEQUENCER_LOCK});
  update delivery_queue q set blocked = false
  where q.delivery_id in (
    select x.delivery_id from (
      select distinct l.endpoint_id, l.order_id from leaving l where l.order_id is not null and not l.blocked) l
    cross join lateral (
      select o.delivery_id, o.blocked from delivery_queue o
      where o.endpoint_id = l.endpoint_id and o.order_id = l.order_id order by o.position limit 1
      for no key update skip locked) x
    where x.blocked);
  return null;
end
$$;

drop trigger delivery_queue_blocked_as_queued on delivery_queue;
drop trigger delivery_queue_paused_as_queued on delivery_queue;
drop trigger delivery_queue_blocks_later on delivery_queue;
drop trigger delivery_queue_unblocks_next on delivery_queue;
drop function delivery_queue_blocked_as_queued();
drop function delivery_queue_paused_as_queued();
drop function delivery_queue_blocks_later();
drop function delivery_queue_unblocks_next();

-- A row is behind when an earlier one of its order is queued (rows of no order never are); what the pass finds wrong
-- and no other transaction holds is set right, unless it changed meanwhile.
create or replace function settle_order_heads() returns integer language plpgsql
  set enable_seqscan to off set enable_bitmapscan to off set enable_hashjoin to off set enable_mergejoin to off
  set jit to off as $$
declare
  n integer;
begin
  perform pg_advisory_xact_lock_shared(${SEQUENCER_LOCK});
  with wrong as materialized (
    select w.delivery_id, w.behind from (
      select o.delivery_id, o.blocked,
        row_number() over (partition by o.endpoint_id, o.order_id order by o.position) > 1 as behind
      from delivery_queue o where o.order_id is not null) w
    where w.blocked <> w.behind),
  locked as (
    select x.delivery_id, r.behind from delivery_queue x join wrong r on r.delivery_id = x.delivery_id
    where x.blocked <> r.behind
    for update of x skip locked)
  update delivery_queue q set blocked = l.behind from locked l where q.delivery_id = l.delivery_id;
  get diagnostics n = row_count;
  return n;
end
$$;

create trigger delivery_queue_flags_as_queued after insert on delivery_queue
  referencing new table as queued for each statement execute function delivery_queue_flags_as_queued();
create trigger delivery_queue_unblocks_next_of_leavers after delete on delivery_queue
  referencing old table as leaving for each statement execute function delivery_queue_unblocks_next_of_leavers();
`);
  }
}
