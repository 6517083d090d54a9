import { Migration } from '@mikro-orm/migrations';

/**
 * The delivery claim also answers when the delivery was made (its event's commit, give or take the transaction), so
 * that the sender can measure the delivery lag from the change to the receiver's 2xx (`webhook_delivery_lag_seconds`).
 * Otherwise the function is the one of migration 20261123010000, which explains it. It has a name of its own: processes
 * still running the previous release keep their prepared claim of `claim_due_deliveries`, which a changed result type
 * would break ("cached plan must not change result type"); the old function goes in a later release.
 */
export class Migration20261123040000_claim_with_created_at extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
create function claim_due_deliveries_v2(p_now timestamptz, p_lease_until timestamptz, p_limit integer, p_token uuid)
returns table (id uuid, event_id uuid, attempts integer, body text, has_endpoint boolean, url text, signature_key text, enabled boolean, created_at timestamptz)
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
    returning d.id, d.event_id, d.endpoint_id, d.attempts, d.seq, d.created_at)
  select c.id, c.event_id, c.attempts, e.payload::text, w.id is not null, w.url, w.signature_key, w.enabled, c.created_at
  from claimed c join events e on e.id = c.event_id left join webhook_configs w on w.id = c.endpoint_id
  order by c.seq
$$;
`);
  }
}
