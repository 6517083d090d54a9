import type { EntityManager } from '@mikro-orm/postgresql';
import type { ClaimedDelivery, DeliveryResult } from '../../domain/delivery.ts';
import { type EndpointNotice, WARN_EVERY_MS } from '../../domain/endpoint-health.ts';
import type { ClaimRequest, DeliveryQueue } from '../../domain/ports.ts';
import type { WebhookConfig } from '../../domain/webhook-config.ts';
import { withDriverConnection } from './driver.ts';
import { type ConfigRow, toConfig } from './rows.ts';

// The sender's side of the queue: one statement each, prepared, on a pooled connection for just that statement (the
// sender never holds a connection while it sends). The queue is `delivery_queue` (migration 20261129100000): the
// deliveries still to be sent, each with its event's feed position; `deliveries` is the log.

/** How many committed events a claim that looks for new ones positions (and enqueues the deliveries of) first. */
const SEQUENCE_PER_CLAIM = 1000;

// The claim is the function claim_deliveries_v6 (migrations 20261129100000, 20261201000000, 20261201010000,
// 20261202000000): a round of the feed's sequencer, then per-order order by feed position, SKIP LOCKED, a lease and a
// token, and a share per endpoint, found without walking what a full endpoint has waiting nor what waits behind an
// order's first delivery; none of an endpoint disabled or without a URL.
const CLAIM = 'select * from claim_deliveries_v6($1, $2, $3, $4, $5, $6, $7, $8)';

/** The queue's sweep: the key of its transaction-scoped advisory lock ('pbi2'; the sequencer's is 'pbi1'). */
export const SWEEP_LOCK = 0x70626932;
const SETTLE = `select case when pg_try_advisory_xact_lock(${SWEEP_LOCK})
  then settle_paused_flags() + settle_order_heads() else 0 end as n`;

const RELEASE = `
  update delivery_queue q set lease_until = null, claim_token = null from unnest($1::uuid[], $2::uuid[]) as c(id, token)
  where q.delivery_id = c.id and q.claim_token = c.token`;

// Only the holder of the current claim changes the delivery: a finished one leaves the queue, a retried one waits in it
// for its next attempt, and the log row follows (a HOT update: no index of `deliveries` holds what it changes). A
// sender whose lease ran out and was claimed over has its tries logged, and nothing else. Each try keeps what was sent
// and answered, once (a unique key, migration 20261201030000): a record made again after its answer was lost, even
// while the first is still running, logs and judges no try twice. The endpoints' health follows in
// the same statement, as judgeEndpoint (domain/endpoint-health.ts) says, on their rows locked in id order (so that two
// records never judge from the same old state), from the tries sent to each endpoint's current URL (a try to the URL it
// had before says nothing of the new one), as it stands once locked (a change of URL that committed while the record
// waited for the lock counts): only endpoints this batch could change are locked (a failure, or a success while
// failing); the statement answers the notices decided, mailed once it has committed. It commits without waiting for the
// WAL's flush: a record lost in a crash is an attempt made again after its lease, so at least once holds.
const RECORD = `
  with results as (
    select r.* from unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $18::timestamptz[])
      as r(id, token, status, next_attempt_at, created_at),
      (select set_config('synchronous_commit', 'off', true)) as durability),
  finished as (
    delete from delivery_queue q using results r
    where q.delivery_id = r.id and q.claim_token = r.token and r.status <> 'pending'
    returning q.delivery_id, r.token),
  retried as (
    update delivery_queue q set attempts = q.attempts + 1, next_attempt_at = r.next_attempt_at, lease_until = null, claim_token = null
    from results r where q.delivery_id = r.id and q.claim_token = r.token and r.status = 'pending'
    returning q.delivery_id, r.token),
  current as (select * from finished union all select * from retried),
  updated as (
    update deliveries d set status = r.status, attempts = d.attempts + 1, next_attempt_at = coalesce(r.next_attempt_at, d.next_attempt_at),
      failed_at = case when r.status = 'failed' then $5::timestamptz end, updated_at = $5
    from results r join current c on c.delivery_id = r.id and c.token = r.token
    where d.id = r.id and d.created_at = r.created_at
    returning d.endpoint_id, d.status),
  tries as (
    select * from unnest($6::uuid[], $7::uuid[], $8::timestamptz[], $9::int[], $10::int[], $11::text[], $12::text[], $13::text[], $14::text[],
      $15::text[], $18::timestamptz[])
      as t(delivery_id, endpoint_id, at, status_code, duration_ms, error, request_url, request_headers, response_headers, response_body,
        created_at)),
  logged as (
    insert into delivery_attempts (delivery_id, endpoint_id, at, status_code, duration_ms, error, request_url, request_headers, response_headers,
      response_body, created_at)
    select delivery_id, endpoint_id, at, status_code, duration_ms, error, request_url, request_headers::json, response_headers::json,
      response_body, created_at from tries
    on conflict (delivery_id, created_at, at) do nothing
    returning endpoint_id, at, request_url, status_code),
  sent as (
    select t.endpoint_id, t.at, t.request_url as url, coalesce(t.status_code between 200 and 299, false) as ok
    from logged t join webhook_configs w on w.id = t.endpoint_id where t.request_url = w.url),
  ended as (select endpoint_id, count(*)::int as n from updated where status = 'failed' group by endpoint_id),
  locked as (
    select w.id, w.account_id, w.url, w.enabled, w.failing_since, w.failure_mailed_at, w.last_ok_at
    from webhook_configs w
    where w.id in (select endpoint_id from sent union select endpoint_id from ended)
      and (w.failing_since is not null or w.id in (select endpoint_id from sent where not ok union select endpoint_id from ended))
    order by w.id for update),
  -- The last 2xx: this batch's, or one after this batch's first failure (an attempt that started later and was
  -- recorded first, by this sender or another): as a record that held the row before knew it (read with the row, fresh
  -- after a wait for it), or logged by one that did not take the row.
  answered as (
    select l.*, coalesce(e.n, 0) as ended_failed,
      greatest(
        (select max(s.at) from sent s where s.endpoint_id = l.id and s.url = l.url and s.ok),
        case when l.last_ok_at > f.first_bad then l.last_ok_at end,
        (select max(a.at) from delivery_attempts a
          where a.endpoint_id = l.id and a.request_url = l.url and a.status_code between 200 and 299
            and a.at > f.first_bad))
        as last_ok
    from locked l left join ended e on e.endpoint_id = l.id
      cross join lateral (
        select min(s.at) as first_bad from sent s where s.endpoint_id = l.id and s.url = l.url and not s.ok) f),
  health as (
    select a.*, case when a.last_ok is not null
        then least(
          (select min(s.at) from sent s where s.endpoint_id = a.id and s.url = a.url and not s.ok and s.at > a.last_ok),
          case when a.failing_since > a.last_ok then a.failing_since end)
        else coalesce(a.failing_since,
          (select min(s.at) from sent s where s.endpoint_id = a.id and s.url = a.url and not s.ok)) end
          as now_failing_since
    from answered a),
  judged as (
    select h.*, h.now_failing_since is not null and h.ended_failed > 0 and h.enabled
      and h.now_failing_since <= $5::timestamptz - $16::bigint * interval '1 millisecond' as disable
    from health h),
  verdict as (
    select j.*, not j.disable and j.now_failing_since is not null and j.ended_failed > 0 and j.enabled
      and (j.failure_mailed_at is null
        or (j.failure_mailed_at < j.now_failing_since and j.failure_mailed_at <= $5::timestamptz - $17::bigint * interval '1 millisecond')) as warn
    from judged j),
  changed as (
    update webhook_configs w set failing_since = v.now_failing_since, enabled = v.enabled and not v.disable,
      disabled_reason = case when v.disable then 'failing' else w.disabled_reason end,
      failure_mailed_at = case when v.disable or v.warn then $5 else v.failure_mailed_at end,
      last_ok_at = greatest(v.last_ok_at, v.last_ok)
    from verdict v where w.id = v.id
      and (v.failing_since is distinct from v.now_failing_since or v.disable or v.warn
        or v.last_ok > coalesce(v.last_ok_at, '-infinity')))
  select v.id as endpoint_id, v.account_id, v.url, v.now_failing_since as failing_since, case when v.disable then 'disabled' else 'failing' end as kind,
    v.ended_failed + (select count(*) from deliveries x where x.endpoint_id = v.id and x.failed_at is not null)::int as failed_deliveries
  from verdict v where v.disable or v.warn`;

interface NoticeRow {
  kind: EndpointNotice['kind'];
  endpoint_id: string;
  account_id: string;
  url: string | null;
  failing_since: string;
  failed_deliveries: number;
}
interface ClaimRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  attempts: number;
  body: string;
  created_at: Date;
  endpoint: ConfigRow | null;
  traceparent: string | null;
}

/** What the sender needs of the endpoint: its URL, whether it is enabled and failing, and what signs. */
const endpointOf = (config: WebhookConfig) => {
  const { url, enabled, failingSince, signatureKey, previousKey, asymmetricSigning, signingPair, previousPair } =
    config;
  return { url, enabled, failingSince, signatureKey, previousKey, asymmetricSigning, signingPair, previousPair };
};

export class SqlDeliveryQueue implements DeliveryQueue {
  constructor(private readonly em: EntityManager) {}

  claimDue(request: ClaimRequest): Promise<ClaimedDelivery[]> {
    const { limit, now, leaseUntil, claimToken, perEndpoint, held, lookForNew } = request;
    const values = [
      now,
      leaseUntil,
      limit,
      claimToken,
      perEndpoint,
      [...held.keys()],
      [...held.values()],
      lookForNew ? SEQUENCE_PER_CLAIM : 0,
    ];
    return withDriverConnection(this.em, async (client) => {
      const { rows } = await client.query<ClaimRow>({ name: 'deliveries-claim-v8', text: CLAIM, values });
      return rows.map((r) => ({
        id: r.id,
        eventId: r.event_id,
        endpointId: r.endpoint_id,
        attempts: r.attempts,
        body: r.body,
        leaseUntil,
        claimToken,
        createdAt: new Date(r.created_at),
        endpoint: r.endpoint && endpointOf(toConfig(r.endpoint)),
        trace: r.traceparent,
      }));
    });
  }

  async release(claims: readonly Pick<ClaimedDelivery, 'id' | 'claimToken'>[]): Promise<void> {
    if (claims.length === 0) return;
    await withDriverConnection(this.em, (client) =>
      client.query({
        name: 'deliveries-release-v2',
        text: RELEASE,
        values: [claims.map((c) => c.id), claims.map((c) => c.claimToken)],
      }),
    );
  }

  /**
   * settle_paused_flags and settle_order_heads (migrations 20261201010000, 20261202000000): passes over the queue, by
   * one process at a time. Another's sweep under way sets right what this one would: this one passes.
   */
  async settle(): Promise<number> {
    const { rows } = await withDriverConnection(this.em, (client) =>
      client.query<{ n: number }>({
        name: 'deliveries-settle-flags-v2',
        text: SETTLE,
      }),
    );
    return rows[0]!.n;
  }

  async record(results: readonly DeliveryResult[], at: Date, disableAfterMs: number): Promise<EndpointNotice[]> {
    if (results.length === 0) return [];
    const { rows } = await withDriverConnection(this.em, (client) =>
      client.query<NoticeRow>({
        name: 'deliveries-record-v7',
        text: RECORD,
        values: [
          results.map((r) => r.deliveryId),
          results.map((r) => r.claimToken),
          results.map((r) => r.state.status),
          results.map((r) => (r.state.status === 'pending' ? r.state.nextAttemptAt : null)),
          at,
          results.map((r) => r.deliveryId),
          results.map((r) => r.endpointId),
          results.map((r) => r.attempt.at),
          results.map((r) => r.attempt.statusCode),
          results.map((r) => Math.round(r.attempt.durationMs)),
          results.map((r) => r.attempt.error),
          results.map((r) => r.exchange?.request.url ?? null),
          results.map((r) => (r.exchange ? JSON.stringify(r.exchange.request.headers) : null)),
          results.map((r) => (r.exchange?.response ? JSON.stringify(r.exchange.response.headers) : null)),
          results.map((r) => r.exchange?.response?.body ?? null),
          disableAfterMs,
          WARN_EVERY_MS,
          results.map((r) => r.createdAt),
        ],
      }),
    );
    return rows.map((r) => ({
      kind: r.kind,
      endpointId: r.endpoint_id,
      accountId: r.account_id,
      url: r.url,
      failingSince: new Date(r.failing_since),
      failedDeliveries: r.failed_deliveries,
    }));
  }
}
