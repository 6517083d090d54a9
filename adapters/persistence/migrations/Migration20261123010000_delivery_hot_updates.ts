import { Migration } from '@mikro-orm/migrations';

/**
 * The delivery queue's write path (docs/BENCHMARKS.md, webhook delivery):
 * - Every delivery is updated twice (its claim, then its outcome). Pages kept 30 % free let the claim's update stay
 *   on its page without touching any index (a HOT update: the claim's columns are in none), and the index on
 *   finished deliveries, which no query reads, no longer costs an entry per outcome.
 * - A claim carries a token, and only the holder of the current claim may change a delivery's state: a sender whose
 *   lease ran out (a long pause) logs its attempt but cannot finish, reschedule or release a delivery that another
 *   sender has claimed since, so the later deliveries of its order stay held until the current holder is done.
 * - The claim runs in a function that plans without bitmap scans. Its statistics usually say few deliveries are
 *   pending (most are delivered), so after a burst or an outage the planner would collect and sort every due delivery
 *   to return the first few; the ordered scan of the partial index stops after them, whatever the backlog.
 */
export class Migration20261123010000_delivery_hot_updates extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table deliveries set (fillfactor = 70);
drop index if exists deliveries_finished_idx;
alter table deliveries add column claim_token uuid;

-- One statement from the claim to the payload: a volatile function's statements see commits newer than its caller's
-- snapshot, so a claim joined to the events outside it could lose rows committed in between (claimed, never sent).
create function claim_due_deliveries(p_now timestamptz, p_lease_until timestamptz, p_limit integer, p_token uuid)
returns table (id uuid, event_id uuid, attempts integer, body text, has_endpoint boolean, url text, signature_key text, enabled boolean)
language sql rows 64 set enable_bitmapscan = off as $$
  with due as (
    select d.id from deliveries d
    where d.status = 'pending' and d.next_attempt_at <= p_now and (d.lease_until is null or d.lease_until <= p_now)
      and not exists (
        select 1 from deliveries e
        where e.endpoint_id = d.endpoint_id and e.order_id = d.order_id and e.status = 'pending' and e.seq < d.seq)
    order by d.next_attempt_at, d.seq
    limit p_limit
    for update skip locked),
  claimed as (
    update deliveries d set lease_until = p_lease_until, claim_token = p_token from due where d.id = due.id
    returning d.id, d.event_id, d.endpoint_id, d.attempts, d.seq)
  select c.id, c.event_id, c.attempts, e.payload::text, w.id is not null, w.url, w.signature_key, w.enabled
  from claimed c join events e on e.id = c.event_id left join webhook_configs w on w.id = c.endpoint_id
  order by c.seq
$$;
`);
  }
}
