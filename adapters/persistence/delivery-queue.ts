import type { EntityManager } from '@mikro-orm/postgresql';
import type { ClaimedDelivery, DeliveryDetail, DeliveryFilter, DeliveryResult, DeliveryView } from '../../domain/delivery.ts';
import { WARN_EVERY_MS, type EndpointNotice } from '../../domain/endpoint-health.ts';
import type { DeliveryQueue } from '../../domain/ports.ts';
import { withDriverConnection } from './driver.ts';
import type { WorkNotices } from './wake-ups/notices.ts';
import { previousKeyOf } from './rows.ts';
import { isStoredId } from './stored-ids.ts';

// One statement each, prepared, on the unit of work's connection (or, outside one, a pooled connection for just that
// statement): the sender never holds a connection while it sends.

// The claim itself is the function claim_due_deliveries_v3 (migrations 20261123010000, 20261123040000 and 20261127100000):
// per-order order, SKIP LOCKED, a lease and a token, planned so that a backlog does not make it slower.
const CLAIM = `select * from claim_due_deliveries_v3($1, $2, $3, $4)`;

// Only the holder of the current claim changes the delivery (the token is cleared by every outcome and release);
// a sender whose lease ran out and was claimed over has its tries logged, and nothing else. Each try keeps what was
// sent and answered. The endpoints' health follows in the same statement, as judgeEndpoint (domain/endpoint-health.ts)
// says, on their rows locked in id order (so that two records never judge from the same old state): only endpoints
// this batch could change are locked (a failure, or a success while failing); the statement answers the notices
// decided, mailed once it has committed.
const RECORD = `
  with results as (
    select * from unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[]) as r(id, token, status, next_attempt_at)),
  updated as (
    update deliveries d set status = r.status, attempts = d.attempts + 1,
      next_attempt_at = coalesce(r.next_attempt_at, d.next_attempt_at), lease_until = null, claim_token = null, updated_at = $5
    from results r where d.id = r.id and d.claim_token = r.token
    returning d.endpoint_id, d.status),
  tries as (
    select * from unnest($6::uuid[], $7::timestamptz[], $8::int[], $9::int[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
      as t(delivery_id, at, status_code, duration_ms, error, request_url, request_headers, response_headers, response_body)),
  logged as (
    insert into delivery_attempts (delivery_id, at, status_code, duration_ms, error, request_url, request_headers, response_headers, response_body)
    select delivery_id, at, status_code, duration_ms, error, request_url, request_headers::json, response_headers::json, response_body from tries),
  sent as (
    select d.endpoint_id, t.at, coalesce(t.status_code between 200 and 299, false) as ok
    from tries t join deliveries d on d.id = t.delivery_id where t.request_url is not null),
  ended as (select endpoint_id, count(*)::int as n from updated where status = 'failed' group by endpoint_id),
  locked as (
    select w.id, w.account_id, w.url, w.enabled, w.failing_since, w.failure_mailed_at from webhook_configs w
    where w.id in (select endpoint_id from sent union select endpoint_id from ended)
      and (w.failing_since is not null or w.id in (select endpoint_id from sent where not ok union select endpoint_id from ended))
    order by w.id for update),
  answered as (
    select l.*, coalesce(e.n, 0) as ended_failed, (select max(s.at) from sent s where s.endpoint_id = l.id and s.ok) as last_ok
    from locked l left join ended e on e.endpoint_id = l.id),
  health as (
    select a.*, case when a.last_ok is not null
        then (select min(s.at) from sent s where s.endpoint_id = a.id and not s.ok and s.at > a.last_ok)
        else coalesce(a.failing_since, (select min(s.at) from sent s where s.endpoint_id = a.id and not s.ok)) end as now_failing_since
    from answered a),
  judged as (
    select h.*, h.now_failing_since is not null and h.ended_failed > 0 and h.enabled
      and h.now_failing_since <= $5::timestamptz - $15::bigint * interval '1 millisecond' as disable
    from health h),
  verdict as (
    select j.*, not j.disable and j.now_failing_since is not null and j.ended_failed > 0 and j.enabled
      and (j.failure_mailed_at is null or j.failure_mailed_at <= $5::timestamptz - $16::bigint * interval '1 millisecond') as warn
    from judged j),
  changed as (
    update webhook_configs w set failing_since = v.now_failing_since, enabled = v.enabled and not v.disable,
      disabled_reason = case when v.disable then 'failing' else w.disabled_reason end,
      failure_mailed_at = case when v.disable or v.warn then $5 else v.failure_mailed_at end
    from verdict v where w.id = v.id and (v.failing_since is distinct from v.now_failing_since or v.disable or v.warn))
  select v.id as endpoint_id, v.account_id, v.url, v.now_failing_since as failing_since, case when v.disable then 'disabled' else 'failing' end as kind,
    v.ended_failed + (select count(*) from deliveries x where x.endpoint_id = v.id and x.status = 'failed')::int as failed_deliveries
  from verdict v where v.disable or v.warn`;

// A delivery being sent right now (pending under a live lease) is left to its sender: sending it twice at once
// would only race two outcomes.
const REDELIVER = `
  with target as (
    select id, status = 'pending' and coalesce(lease_until > $2, false) as busy from deliveries
    where id = $1 and ($3::uuid is null or endpoint_id = $3) for update),
  again as (
    update deliveries d set status = 'pending', next_attempt_at = $2, lease_until = null, claim_token = null, updated_at = $2
    from target where d.id = target.id and not target.busy
    returning d.id)
  select (select count(*) from target) as found, (select count(*) from again) as pending_again`;

// Every failed delivery of the endpoint since a time, pending again and due now; the claim keeps each order's deliveries
// in their order, these among them.
const REDELIVER_FAILED = `
  with again as (
    update deliveries set status = 'pending', next_attempt_at = $3, lease_until = null, claim_token = null, updated_at = $3
    where ($1::uuid is null or endpoint_id = $1) and ($4::uuid is null or account_id = $4) and status = 'failed' and created_at >= $2
    returning 1)
  select count(*) as count from again`;

const LIST = `
  select d.id, d.seq, d.event_id, e.type as event_type, d.account_id, e.scope, w.url, d.status, d.created_at,
    case when d.status = 'pending' then d.next_attempt_at end as next_attempt_at,
    coalesce((select json_agg(json_build_object('at', a.at, 'statusCode', a.status_code, 'durationMs', a.duration_ms, 'error', a.error) order by a.id)
              from delivery_attempts a where a.delivery_id = d.id), '[]') as attempts
  from deliveries d join events e on e.id = d.event_id left join webhook_configs w on w.id = d.endpoint_id
  where ($1::uuid is null or d.account_id = $1) and ($2::uuid is null or d.endpoint_id = $2) and ($3::text is null or d.status = $3)
    and ($5::timestamptz is null or (d.created_at, d.seq) < ($5, $6::bigint))
  order by d.created_at desc, d.seq desc
  limit $4`;

// One delivery in full: the payload is the event's body exactly as stored and sent (the claim sends the same text).
const GET = `
  select d.id, d.seq, d.event_id, e.type as event_type, d.account_id, e.scope, w.url, d.status, d.created_at, d.endpoint_id,
    case when d.status = 'pending' then d.next_attempt_at end as next_attempt_at, e.payload::text as payload,
    coalesce((select json_agg(json_build_object('at', a.at, 'statusCode', a.status_code, 'durationMs', a.duration_ms, 'error', a.error,
                'request', case when a.request_url is not null then json_build_object('url', a.request_url, 'headers', a.request_headers) end,
                'responseHeaders', a.response_headers, 'responseBody', a.response_body) order by a.id)
              from delivery_attempts a where a.delivery_id = d.id), '[]') as attempts
  from deliveries d join events e on e.id = d.event_id left join webhook_configs w on w.id = d.endpoint_id
  where d.id = $1 and ($2::uuid is null or d.endpoint_id = $2)`;

interface NoticeRow { kind: EndpointNotice['kind']; endpoint_id: string; account_id: string; url: string | null; failing_since: string; failed_deliveries: number }
interface ClaimRow {
  id: string; event_id: string; attempts: number; body: string; has_endpoint: boolean; url: string | null; signature_key: string | null; enabled: boolean | null;
  created_at: Date; previous_signature_key: string | null; previous_key_expires_at: string | null;
}
interface ListRow {
  id: string; seq: string; event_id: string; event_type: DeliveryView['eventType']; account_id: string; scope: DeliveryView['scope']; url: string | null;
  status: DeliveryView['status']; created_at: string; next_attempt_at: string | null;
  attempts: (StoredAttempt & {
    request?: { url: string; headers: Record<string, string> } | null; responseHeaders?: Record<string, string> | null; responseBody?: string | null;
  })[];
}
interface StoredAttempt { at: string; statusCode: number | null; durationMs: number; error: string | null }

const toAttempt = (a: StoredAttempt) => ({ at: new Date(a.at), statusCode: a.statusCode, durationMs: a.durationMs, error: a.error });
const toView = (r: ListRow): DeliveryView => ({
  id: r.id, seq: Number(r.seq), eventId: r.event_id, eventType: r.event_type, accountId: r.account_id, scope: r.scope, url: r.url, status: r.status,
  attempts: r.attempts.map(toAttempt), createdAt: new Date(r.created_at), nextAttemptAt: r.next_attempt_at ? new Date(r.next_attempt_at) : null,
});

export class SqlDeliveryQueue implements DeliveryQueue {
  constructor(private readonly em: EntityManager, private readonly notices: WorkNotices) {}

  claimDue(limit: number, now: Date, leaseUntil: Date, claimToken: string): Promise<ClaimedDelivery[]> {
    return withDriverConnection(this.em, async (client) => {
      const { rows } = await client.query<ClaimRow>({ name: 'deliveries-claim-v3', text: CLAIM, values: [now, leaseUntil, limit, claimToken] });
      return rows.map((r) => ({
        id: r.id, eventId: r.event_id, attempts: r.attempts, body: r.body, leaseUntil, claimToken, createdAt: new Date(r.created_at),
        endpoint: r.has_endpoint ? { url: r.url, signatureKey: r.signature_key, previousKey: previousKeyOf(r), enabled: r.enabled! } : null,
      }));
    });
  }

  async release(claims: readonly Pick<ClaimedDelivery, 'id' | 'claimToken'>[]): Promise<void> {
    if (claims.length === 0) return;
    await withDriverConnection(this.em, (client) => client.query({
      name: 'deliveries-release',
      text: `update deliveries d set lease_until = null, claim_token = null from unnest($1::uuid[], $2::uuid[]) as c(id, token)
             where d.id = c.id and d.claim_token = c.token`,
      values: [claims.map((c) => c.id), claims.map((c) => c.claimToken)],
    }));
  }

  async record(results: readonly DeliveryResult[], at: Date, disableAfterMs: number): Promise<EndpointNotice[]> {
    if (results.length === 0) return [];
    const tries = results.map((r) => ({ id: r.deliveryId, ...r.attempt, request: r.exchange?.request, response: r.exchange?.response }));
    const { rows } = await withDriverConnection(this.em, (client) => client.query<NoticeRow>({
      name: 'deliveries-record-v2', text: RECORD,
      values: [
        results.map((r) => r.deliveryId), results.map((r) => r.claimToken), results.map((r) => r.state.status),
        results.map((r) => (r.state.status === 'pending' ? r.state.nextAttemptAt : null)), at,
        tries.map((t) => t.id), tries.map((t) => t.at), tries.map((t) => t.statusCode), tries.map((t) => Math.round(t.durationMs)),
        tries.map((t) => t.error), tries.map((t) => t.request?.url ?? null), tries.map((t) => (t.request ? JSON.stringify(t.request.headers) : null)),
        tries.map((t) => (t.response ? JSON.stringify(t.response.headers) : null)), tries.map((t) => t.response?.body ?? null),
        disableAfterMs, WARN_EVERY_MS,
      ],
    }));
    return rows.map((r) => ({
      kind: r.kind, endpointId: r.endpoint_id, accountId: r.account_id, url: r.url, failingSince: new Date(r.failing_since), failedDeliveries: r.failed_deliveries,
    }));
  }

  async get(deliveryId: string, endpointId?: string): Promise<DeliveryDetail | null> {
    if (!isStoredId(deliveryId) || (endpointId !== undefined && !isStoredId(endpointId))) return null;
    return withDriverConnection(this.em, async (client) => {
      const { rows: [r] } = await client.query<ListRow & { endpoint_id: string; payload: string }>({
        name: 'deliveries-get', text: GET, values: [deliveryId, endpointId ?? null],
      });
      if (!r) return null;
      return {
        ...toView(r), endpointId: r.endpoint_id, payload: r.payload,
        attempts: r.attempts.map((a) => ({
          ...toAttempt(a), request: a.request ?? null,
          response: a.request && a.responseHeaders ? { headers: a.responseHeaders, body: a.responseBody ?? '' } : null,
        })),
      };
    });
  }

  async redeliver(deliveryId: string, now: Date, endpointId?: string): Promise<boolean> {
    if (!isStoredId(deliveryId)) return false;
    const { rows: [row] } = await withDriverConnection(this.em, (client) =>
      client.query<{ found: string; pending_again: string }>({ name: 'deliveries-redeliver', text: REDELIVER, values: [deliveryId, now, endpointId ?? null] }));
    if (Number(row!.pending_again) > 0) this.notices.created('deliveries');
    return Number(row!.found) > 0;
  }

  async redeliverFailed(of: { endpointId: string } | { accountId: string }, since: Date, now: Date): Promise<number> {
    const endpointId = 'endpointId' in of ? of.endpointId : null;
    const accountId = 'accountId' in of ? of.accountId : null;
    if (accountId !== null && !isStoredId(accountId)) return 0;
    const { rows: [row] } = await withDriverConnection(this.em, (client) =>
      client.query<{ count: string }>({ name: 'deliveries-redeliver-failed', text: REDELIVER_FAILED, values: [endpointId, since, now, accountId] }));
    const count = Number(row!.count);
    if (count > 0) this.notices.created('deliveries');
    return count;
  }

  list(filter: DeliveryFilter): Promise<DeliveryView[]> {
    if (filter.accountId != null && !isStoredId(filter.accountId)) return Promise.resolve([]);
    return withDriverConnection(this.em, async (client) => {
      const { rows } = await client.query<ListRow>({
        name: 'deliveries-list', text: LIST,
        values: [filter.accountId ?? null, filter.endpointId ?? null, filter.status ?? null, filter.limit,
          filter.before?.createdAt ?? null, filter.before?.seq ?? null],
      });
      return rows.map(toView);
    });
  }

  /**
   * Finished deliveries first, each under a row lock (a redelivery committing meanwhile makes its delivery pending,
   * and the lock's re-check then keeps it), then the old events left without any delivery.
   */
  purgeBefore(before: Date, limit: number): Promise<number> {
    return withDriverConnection(this.em, async (client) => {
      const deliveries = await client.query({
        name: 'deliveries-purge',
        text: `delete from deliveries where id in (
          select d.id from deliveries d join events e on e.id = d.event_id
          where e.created_at < $1 and d.status <> 'pending'
          order by e.created_at limit $2 for update of d skip locked)`,
        values: [before, limit],
      });
      // Each endpoint's purge horizon moves with what is deleted, in the same statement: the feed answers 410 for a
      // cursor that an event after it was purged from (event-feed.ts).
      const events = await client.query({
        name: 'events-purge',
        text: `with purged as (
            delete from events where id in (
              select e.id from events e where e.created_at < $1 and not exists (select 1 from deliveries d where d.event_id = e.id)
              order by e.created_at limit $2)
            returning endpoint_id, position),
          horizon as (
            insert into event_feed_purged (endpoint_id, position)
            select endpoint_id, max(position) from purged where endpoint_id is not null and position is not null group by endpoint_id
            on conflict (endpoint_id) do update set position = greatest(event_feed_purged.position, excluded.position))
          select count(*)::int as n from purged`,
        values: [before, limit],
      });
      return Math.max(deliveries.rowCount ?? 0, (events.rows[0] as { n: number }).n);
    });
  }
}
