import { Migration } from '@mikro-orm/migrations';

// The feed sequencer's advisory lock key ('pbi1'), as adapters/persistence/event-feed.ts takes it; a migration keeps its own
// copy (what it wrote must not move with later code).
const SEQUENCER_LOCK = 0x7062_6931;

/**
 * Asymmetric signatures (CONTRACT §11, Standard Webhooks `v1a`): an endpoint's Ed25519 pair (the private key as PKCS8
 * DER in base64, never shown; the public key as shown, `whpk_…`), made when asymmetric signing is first turned on and
 * kept when it is turned off, and the pair rotated out with the end of its window (all three or none).
 *
 * The delivery claim answers the endpoint as the row it is (`to_json`), so that what signs a delivery is whatever the
 * configuration holds, these columns and any later ones, without a new result type for every one of them. It has a name
 * of its own: a process that prepared `claim_deliveries` finds it gone (its claims fail, it backs off) rather than
 * misreading a result of another shape.
 */
export class Migration20261129120000_asymmetric_signing extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
alter table webhook_configs
  add column asymmetric_signing boolean not null default false,
  add column signing_private_key text,
  add column signing_public_key text,
  add column previous_signing_private_key text,
  add column previous_signing_public_key text,
  add column previous_signing_expires_at timestamptz,
  add constraint webhook_configs_signing_pair_whole check ((signing_private_key is null) = (signing_public_key is null)),
  add constraint webhook_configs_previous_pair_whole check (
    (previous_signing_private_key is null) = (previous_signing_public_key is null)
    and (previous_signing_private_key is null) = (previous_signing_expires_at is null));

drop function claim_deliveries(timestamptz, timestamptz, integer, uuid, integer, uuid[], integer[], integer);
create function claim_deliveries_v2(p_now timestamptz, p_lease_until timestamptz, p_limit integer, p_token uuid,
  p_per_endpoint integer, p_held uuid[], p_held_counts integer[], p_sequence integer)
returns table (id uuid, event_id uuid, endpoint_id uuid, attempts integer, body text, created_at timestamptz, endpoint json)
language plpgsql set enable_bitmapscan = off as $$
declare
  full_endpoints uuid[];
  positioned integer := 0;
begin
  if p_sequence > 0 then
    perform pg_advisory_xact_lock(${SEQUENCER_LOCK});
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
    update delivery_queue q set lease_until = p_lease_until, claim_token = p_token from due where q.delivery_id = due.delivery_id
    returning q.delivery_id, q.event_id, q.endpoint_id, q.attempts, q.created_at, q.position)
  select c.delivery_id, c.event_id, c.endpoint_id, c.attempts, e.payload::text, c.created_at, to_json(w)
  from claimed c join events e on e.id = c.event_id left join webhook_configs w on w.id = c.endpoint_id
  order by c.position;
end
$$;
`);
  }

  override async down(): Promise<void> {
    this.addSql(`
drop function claim_deliveries_v2(timestamptz, timestamptz, integer, uuid, integer, uuid[], integer[], integer);
alter table webhook_configs drop constraint webhook_configs_previous_pair_whole, drop constraint webhook_configs_signing_pair_whole,
  drop column previous_signing_expires_at, drop column previous_signing_public_key, drop column previous_signing_private_key,
  drop column signing_public_key, drop column signing_private_key, drop column asymmetric_signing;
`);
  }
}
