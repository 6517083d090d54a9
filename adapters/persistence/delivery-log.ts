import type { EntityManager } from '@mikro-orm/postgresql';
import type {
  DeliveryDetail,
  DeliveryFilter,
  DeliveryStats,
  DeliveryView,
  StatsBucket,
} from '../../domain/delivery.ts';
import type { DeliveryLog } from '../../domain/ports.ts';
import { type ReadOn, withDriverConnection } from './driver.ts';
import { ITS_ATTEMPTS, ITS_EVENT, prepareHistoryDays, purgeHistoryBefore } from './history.ts';
import { isStoredId } from './stored-ids.ts';
import type { WorkNotices } from './wake-ups/notices.ts';

// The delivery log (`deliveries` and `delivery_attempts`) and its replays, one statement each, prepared. A replay puts
// the delivery back in the sender's queue (`delivery_queue`, see delivery-queue.ts) with its event's feed position, so
// that it keeps its place among its order's deliveries; one whose event has no position yet is queued by the
// sequencer when it gets one, as every new delivery is.

/** The URL the last attempt went to; the endpoint's current one before any attempt (CONTRACT §10). */
const URL = `coalesce((select a.request_url from delivery_attempts a where ${ITS_ATTEMPTS} and a.request_url is not null
  order by a.id desc limit 1), w.url) as url`;

// A delivery being sent right now (queued under a live lease) is left to its sender: sending it twice at once would
// only race two outcomes. Another one waiting in the queue (a retry) is due now, its claim dropped. The queue's row is
// locked before the log's, as a record takes them (delivery-queue.ts): a redelivery that took the log's row first and
// then waited for the queue's row that a record (of a try whose lease ran out) was deleting closed a cycle with it.
// The order holds because `queued_now` is read within the scan of `deliveries`, below its row lock (EXPLAIN VERBOSE);
// tests/adapters/record-beside-other-writers fails if a plan ever takes the log's row first.
const REDELIVER = `
  with queued_now as (
    select q.lease_until from delivery_queue q where q.delivery_id = $1 and ($3::uuid is null or q.endpoint_id = $3)
    for update),
  target as (
    select d.id, d.event_id, d.endpoint_id, d.order_id, d.attempts, d.created_at,
      coalesce((select q.lease_until > $2 from queued_now q), false) as busy
    from deliveries d where d.id = $1 and ($3::uuid is null or d.endpoint_id = $3) for update of d),
  logged as (
    update deliveries d set status = 'pending', failed_at = null, next_attempt_at = $2, updated_at = $2
    from target t where d.id = t.id and d.created_at = t.created_at and not t.busy
    returning d.id),
  queued as (
    insert into delivery_queue (delivery_id, event_id, endpoint_id, order_id, position, attempts, next_attempt_at, created_at)
    select t.id, t.event_id, t.endpoint_id, t.order_id, e.position, t.attempts, $2, t.created_at
    from target t join events e on e.id = t.event_id and e.created_at = t.created_at where not t.busy and e.position is not null
    -- The queued row as it is now: one claimed since this statement's snapshot is left to its sender.
    on conflict (delivery_id) do update set next_attempt_at = excluded.next_attempt_at, lease_until = null, claim_token = null
      where delivery_queue.lease_until is null or delivery_queue.lease_until <= $2)
  select (select count(*) from target) as found, (select count(*) from logged) as pending_again`;

// Every failed delivery of the endpoint (or account) since a time, pending again and due now, on the index of the
// failed ones; the claim keeps each order's deliveries in their order, these among them.
const REDELIVER_FAILED = `
  with again as (
    update deliveries d set status = 'pending', failed_at = null, next_attempt_at = $3, updated_at = $3
    where ($1::uuid is null or d.endpoint_id = $1) and ($4::uuid is null or d.account_id = $4) and d.failed_at is not null and d.created_at >= $2
    returning d.id, d.event_id, d.endpoint_id, d.order_id, d.attempts, d.created_at),
  queued as (
    insert into delivery_queue (delivery_id, event_id, endpoint_id, order_id, position, attempts, next_attempt_at, created_at)
    select a.id, a.event_id, a.endpoint_id, a.order_id, e.position, a.attempts, $3, a.created_at
    from again a join events e on e.id = a.event_id and e.created_at = a.created_at where e.position is not null
    on conflict (delivery_id) do nothing)
  select count(*) as count from again`;

/**
 * The log, newest first; failed ones read from their own index (`failed_at` is set exactly while a delivery is failed),
 * one order's from the index of orders.
 */
const list = (filter: 'log' | 'failed' | 'order') => `
  select d.id, d.seq, d.event_id, e.type as event_type, d.order_id, d.account_id, e.scope, ${URL}, d.status, d.created_at,
    case when d.status = 'pending' then d.next_attempt_at end as next_attempt_at,
    coalesce((select json_agg(json_build_object('at', a.at, 'statusCode', a.status_code, 'durationMs', a.duration_ms, 'error', a.error) order by a.id)
              from delivery_attempts a where ${ITS_ATTEMPTS}), '[]') as attempts
  from deliveries d join events e on ${ITS_EVENT} left join webhook_configs w on w.id = d.endpoint_id
  where ($1::uuid is null or d.account_id = $1) and ($2::uuid is null or d.endpoint_id = $2) and ($3::text is null or d.status = $3)
    and ($5::timestamptz is null or (d.created_at <= $5 and (d.created_at, d.seq) < ($5, $6::bigint))) and ($7::text is null or e.type = $7)
    ${filter === 'order' ? 'and d.order_id = $8' : `and $8::text is null${filter === 'failed' ? ' and d.failed_at is not null' : ''}`}
  order by d.created_at desc, d.seq desc
  limit $4`;
/**
 * One statement each way a page is found: the failed ones' index, one order's, or the endpoint's (or account's) log.
 */
const LIST = { log: list('log'), failed: list('failed'), order: list('order') };

// One delivery in full: the payload is the event's body exactly as stored and sent (the claim sends the same text).
const GET = `
  select d.id, d.seq, d.event_id, e.type as event_type, d.order_id, d.account_id, e.scope, ${URL}, d.status, d.created_at, d.endpoint_id,
    case when d.status = 'pending' then d.next_attempt_at end as next_attempt_at, e.payload::text as payload,
    coalesce((select json_agg(json_build_object('at', a.at, 'statusCode', a.status_code, 'durationMs', a.duration_ms, 'error', a.error,
                'request', case when a.request_url is not null then json_build_object('url', a.request_url, 'headers', a.request_headers) end,
                'responseHeaders', a.response_headers, 'responseBody', a.response_body) order by a.id)
              from delivery_attempts a where ${ITS_ATTEMPTS}), '[]') as attempts
  from deliveries d join events e on ${ITS_EVENT} left join webhook_configs w on w.id = d.endpoint_id
  where d.id = $1 and ($2::uuid is null or d.endpoint_id = $2)`;

// The endpoint's attempts by UTC hour or day, on the index of attempts by endpoint and time (those sent: an attempt the
// endpoint was disabled for, or without a URL, asked nothing of it); every bucket of the span,
// empty ones with zeros (and null percentiles, percentile_disc of no rows): durations as measured, in whole ms. A day
// is 24 hours whatever the session's time zone.
const STATS = `
  with span as (
    select date_trunc($4, $2::timestamptz, 'UTC') as first, date_trunc($4, $3::timestamptz, 'UTC') as last,
      case $4 when 'day' then interval '24 hours' else interval '1 hour' end as step),
  buckets as (
    select generate_series(span.first, span.last, span.step) as start from span),
  tries as (
    select date_trunc($4, a.at, 'UTC') as start, a.status_code, a.duration_ms from delivery_attempts a, span
    where a.endpoint_id = $1 and a.at >= span.first and a.at < span.last + span.step and a.request_url is not null
      and a.created_at < span.last + span.step)
  select b.start, count(t.start)::int as attempts,
    count(t.start) filter (where t.status_code between 200 and 299)::int as succeeded,
    count(t.start) filter (where t.status_code is null or t.status_code not between 200 and 299)::int as failed,
    percentile_disc(0.5) within group (order by t.duration_ms) as p50,
    percentile_disc(0.99) within group (order by t.duration_ms) as p99
  from buckets b left join tries t on t.start = b.start
  group by b.start order by b.start`;

interface ListRow {
  id: string;
  seq: string;
  event_id: string;
  event_type: DeliveryView['eventType'];
  order_id: string | null;
  account_id: string;
  scope: DeliveryView['scope'];
  url: string | null;
  status: DeliveryView['status'];
  created_at: string;
  next_attempt_at: string | null;
  attempts: (StoredAttempt & {
    request?: { url: string; headers: Record<string, string> } | null;
    responseHeaders?: Record<string, string> | null;
    responseBody?: string | null;
  })[];
}
interface StoredAttempt {
  at: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

const toAttempt = (a: StoredAttempt) => ({
  at: new Date(a.at),
  statusCode: a.statusCode,
  durationMs: a.durationMs,
  error: a.error,
});
const toView = (r: ListRow): DeliveryView => ({
  id: r.id,
  seq: Number(r.seq),
  eventId: r.event_id,
  eventType: r.event_type,
  orderId: r.order_id,
  accountId: r.account_id,
  scope: r.scope,
  url: r.url,
  status: r.status,
  attempts: r.attempts.map(toAttempt),
  createdAt: new Date(r.created_at),
  nextAttemptAt: r.next_attempt_at ? new Date(r.next_attempt_at) : null,
});

export class SqlDeliveryLog implements DeliveryLog {
  constructor(
    private readonly em: EntityManager,
    private readonly notices: WorkNotices,
    private readonly reads: ReadOn = withDriverConnection,
  ) {}

  async get(deliveryId: string, endpointId?: string): Promise<DeliveryDetail | null> {
    if (!isStoredId(deliveryId) || (endpointId !== undefined && !isStoredId(endpointId))) return null;
    return this.reads(this.em, async (client) => {
      const {
        rows: [r],
      } = await client.query<ListRow & { endpoint_id: string; payload: string }>({
        name: 'deliveries-get-v4',
        text: GET,
        values: [deliveryId, endpointId ?? null],
      });
      if (!r) return null;
      return {
        ...toView(r),
        endpointId: r.endpoint_id,
        payload: r.payload,
        attempts: r.attempts.map((a) => ({
          ...toAttempt(a),
          request: a.request ?? null,
          response: a.request && a.responseHeaders ? { headers: a.responseHeaders, body: a.responseBody ?? '' } : null,
        })),
      };
    });
  }

  async redeliver(deliveryId: string, now: Date, endpointId?: string): Promise<boolean> {
    if (!isStoredId(deliveryId)) return false;
    const {
      rows: [row],
    } = await withDriverConnection(this.em, (client) =>
      client.query<{ found: string; pending_again: string }>({
        name: 'deliveries-redeliver-v5',
        text: REDELIVER,
        values: [deliveryId, now, endpointId ?? null],
      }),
    );
    if (Number(row!.pending_again) > 0) this.notices.created('deliveries');
    return Number(row!.found) > 0;
  }

  async redeliverFailed(of: { endpointId: string } | { accountId: string }, since: Date, now: Date): Promise<number> {
    const endpointId = 'endpointId' in of ? of.endpointId : null;
    const accountId = 'accountId' in of ? of.accountId : null;
    if (accountId !== null && !isStoredId(accountId)) return 0;
    const {
      rows: [row],
    } = await withDriverConnection(this.em, (client) =>
      client.query<{ count: string }>({
        name: 'deliveries-redeliver-failed-v3',
        text: REDELIVER_FAILED,
        values: [endpointId, since, now, accountId],
      }),
    );
    const count = Number(row!.count);
    if (count > 0) this.notices.created('deliveries');
    return count;
  }

  list(filter: DeliveryFilter): Promise<DeliveryView[]> {
    if (filter.accountId != null && !isStoredId(filter.accountId)) return Promise.resolve([]);
    const way = filter.orderId !== undefined ? 'order' : filter.status === 'failed' ? 'failed' : 'log';
    return this.reads(this.em, async (client) => {
      const { rows } = await client.query<ListRow>({
        name: `deliveries-list-${way}-v4`,
        text: LIST[way],
        values: [
          filter.accountId ?? null,
          filter.endpointId ?? null,
          filter.status ?? null,
          filter.limit,
          filter.before?.createdAt ?? null,
          filter.before?.seq ?? null,
          filter.eventType ?? null,
          filter.orderId ?? null,
        ],
      });
      return rows.map(toView);
    });
  }

  async stats(endpointId: string, from: Date, to: Date, bucket: StatsBucket): Promise<DeliveryStats[]> {
    if (!isStoredId(endpointId)) return [];
    const { rows } = await this.reads(this.em, (client) =>
      client.query<{
        start: Date;
        attempts: number;
        succeeded: number;
        failed: number;
        p50: number | null;
        p99: number | null;
      }>({ name: 'deliveries-stats-v2', text: STATS, values: [endpointId, from, to, bucket] }),
    );
    return rows.map((r) => ({
      start: new Date(r.start),
      attempts: r.attempts,
      succeeded: r.succeeded,
      failed: r.failed,
      p50Ms: r.p50,
      p99Ms: r.p99,
    }));
  }

  prepareDays(from: Date): Promise<void> {
    return withDriverConnection(this.em, (client) => prepareHistoryDays(client, from));
  }

  purgeBefore(before: Date, limit: number): Promise<number> {
    return withDriverConnection(this.em, (client) => purgeHistoryBefore(client, before, limit));
  }
}
