import type { EntityManager } from '@mikro-orm/postgresql';
import type { ClaimedDelivery, DeliveryFilter, DeliveryResult, DeliveryView } from '../../domain/delivery.ts';
import type { DeliveryQueue } from '../../domain/ports.ts';
import { withDriverConnection } from './driver.ts';

// One statement each, prepared, on the unit of work's connection (or, outside one, a pooled connection for just that
// statement): the sender never holds a connection while it sends.

const CLAIM = `
  with due as (
    select d.id from deliveries d
    where d.status = 'pending' and d.next_attempt_at <= $1 and (d.lease_until is null or d.lease_until <= $1)
      and not exists (
        select 1 from deliveries e
        where e.endpoint_id = d.endpoint_id and e.order_id = d.order_id and e.status = 'pending' and e.seq < d.seq)
    order by d.next_attempt_at, d.seq
    limit $3
    for update skip locked),
  claimed as (
    update deliveries d set lease_until = $2 from due where d.id = due.id
    returning d.id, d.event_id, d.endpoint_id, d.attempts, d.seq)
  select c.id, c.event_id, c.attempts, e.payload::text as body, w.id is not null as has_endpoint, w.url, w.signature_key, w.enabled
  from claimed c join events e on e.id = c.event_id left join webhook_configs w on w.id = c.endpoint_id
  order by c.seq`;

// A delivery finished meanwhile by someone else (a lease that ran out) keeps its state; the tries are logged anyway.
const RECORD = `
  with results as (
    select * from unnest($1::uuid[], $2::text[], $3::timestamptz[]) as r(id, status, next_attempt_at)),
  updated as (
    update deliveries d set status = r.status, attempts = d.attempts + 1,
      next_attempt_at = coalesce(r.next_attempt_at, d.next_attempt_at), lease_until = null, updated_at = $4
    from results r where d.id = r.id and d.status = 'pending'
    returning d.id)
  insert into delivery_attempts (delivery_id, at, status_code, duration_ms, error)
  select * from unnest($5::uuid[], $6::timestamptz[], $7::int[], $8::int[], $9::text[])`;

const LIST = `
  select d.id, d.event_id, e.type as event_type, d.account_id, e.scope, w.url, d.status, d.created_at,
    case when d.status = 'pending' then d.next_attempt_at end as next_attempt_at,
    coalesce((select json_agg(json_build_object('at', a.at, 'statusCode', a.status_code, 'durationMs', a.duration_ms, 'error', a.error) order by a.id)
              from delivery_attempts a where a.delivery_id = d.id), '[]') as attempts
  from deliveries d join events e on e.id = d.event_id left join webhook_configs w on w.id = d.endpoint_id
  where ($1::uuid is null or d.account_id = $1) and ($2::uuid is null or d.endpoint_id = $2) and ($3::text is null or d.status = $3)
  order by d.created_at desc, d.seq desc
  limit $4`;

interface ClaimRow { id: string; event_id: string; attempts: number; body: string; has_endpoint: boolean; url: string | null; signature_key: string | null; enabled: boolean | null }
interface ListRow {
  id: string; event_id: string; event_type: DeliveryView['eventType']; account_id: string; scope: DeliveryView['scope']; url: string | null;
  status: DeliveryView['status']; created_at: string; next_attempt_at: string | null;
  attempts: { at: string; statusCode: number | null; durationMs: number; error: string | null }[];
}

export class SqlDeliveryQueue implements DeliveryQueue {
  constructor(private readonly em: EntityManager) {}

  claimDue(limit: number, now: Date, leaseUntil: Date): Promise<ClaimedDelivery[]> {
    return withDriverConnection(this.em, async (client) => {
      const { rows } = await client.query<ClaimRow>({ name: 'deliveries-claim', text: CLAIM, values: [now, leaseUntil, limit] });
      return rows.map((r) => ({
        id: r.id, eventId: r.event_id, attempts: r.attempts, body: r.body,
        endpoint: r.has_endpoint ? { url: r.url, signatureKey: r.signature_key, enabled: r.enabled! } : null,
      }));
    });
  }

  async record(results: readonly DeliveryResult[], at: Date): Promise<void> {
    if (results.length === 0) return;
    const tries = results.flatMap((r) => r.tries.map((t) => ({ id: r.deliveryId, ...t })));
    await withDriverConnection(this.em, (client) => client.query({
      name: 'deliveries-record', text: RECORD,
      values: [
        results.map((r) => r.deliveryId), results.map((r) => r.state.status),
        results.map((r) => (r.state.status === 'pending' ? r.state.nextAttemptAt : null)), at,
        tries.map((t) => t.id), tries.map((t) => t.at), tries.map((t) => t.statusCode), tries.map((t) => Math.round(t.durationMs)),
        tries.map((t) => t.error),
      ],
    }));
  }

  redeliver(deliveryId: string, now: Date): Promise<boolean> {
    return withDriverConnection(this.em, async (client) => (await client.query({
      name: 'deliveries-redeliver',
      text: `update deliveries set status = 'pending', next_attempt_at = $2, lease_until = null, updated_at = $2 where id = $1 returning id`,
      values: [deliveryId, now],
    })).rows.length > 0);
  }

  list(filter: DeliveryFilter): Promise<DeliveryView[]> {
    return withDriverConnection(this.em, async (client) => {
      const { rows } = await client.query<ListRow>({
        name: 'deliveries-list', text: LIST,
        values: [filter.accountId ?? null, filter.endpointId ?? null, filter.status ?? null, filter.limit],
      });
      return rows.map((r) => ({
        id: r.id, eventId: r.event_id, eventType: r.event_type, accountId: r.account_id, scope: r.scope, url: r.url, status: r.status,
        attempts: r.attempts.map((a) => ({ at: new Date(a.at), statusCode: a.statusCode, durationMs: a.durationMs, error: a.error })),
        createdAt: new Date(r.created_at), nextAttemptAt: r.next_attempt_at ? new Date(r.next_attempt_at) : null,
      }));
    });
  }

  purgeBefore(before: Date, limit: number): Promise<number> {
    return withDriverConnection(this.em, async (client) => (await client.query({
      name: 'events-purge',
      text: `delete from events where id in (
        select e.id from events e where e.created_at < $1
          and not exists (select 1 from deliveries d where d.event_id = e.id and d.status = 'pending')
        order by e.created_at limit $2)`,
      values: [before, limit],
    })).rowCount ?? 0);
  }
}
