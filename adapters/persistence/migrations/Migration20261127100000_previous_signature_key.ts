import { Migration } from '@mikro-orm/migrations';

/**
 * Key rotation (CONTRACT §11): the key rotated out is kept beside the current one, as it is (a column of the
 * configuration), with the end of its window; both or neither. The delivery claim answers them too, so that the sender
 * signs with both while the window lasts: a function of its own name, as in migration 20261123040000 (processes still
 * running the previous release keep their prepared claim of `claim_due_deliveries_v2`, whose result type stays).
 */
export class Migration20261127100000_previous_signature_key extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table webhook_configs
  add column previous_signature_key text,
  add column previous_key_expires_at timestamptz,
  add constraint webhook_configs_previous_key_whole check ((previous_signature_key is null) = (previous_key_expires_at is null));
create index webhook_configs_previous_key_expires_idx on webhook_configs (previous_key_expires_at) where previous_key_expires_at is not null;

create function claim_due_deliveries_v3(p_now timestamptz, p_lease_until timestamptz, p_limit integer, p_token uuid)
returns table (id uuid, event_id uuid, attempts integer, body text, has_endpoint boolean, url text, signature_key text, enabled boolean,
  created_at timestamptz, previous_signature_key text, previous_key_expires_at timestamptz)
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
  select c.id, c.event_id, c.attempts, e.payload::text, w.id is not null, w.url, w.signature_key, w.enabled, c.created_at,
    w.previous_signature_key, w.previous_key_expires_at
  from claimed c join events e on e.id = c.event_id left join webhook_configs w on w.id = c.endpoint_id
  order by c.seq
$$;
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop function claim_due_deliveries_v3(timestamptz, timestamptz, integer, uuid);
drop index webhook_configs_previous_key_expires_idx;
alter table webhook_configs drop constraint webhook_configs_previous_key_whole,
  drop column previous_signature_key, drop column previous_key_expires_at;
`);
  }
}
