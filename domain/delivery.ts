import type { EventType } from './event.ts';
import type { Scope, SigningKeys } from './webhook-config.ts';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];

/** One durable attempt of a delivery, as the delivery log shows it. */
export interface DeliveryAttempt {
  at: Date;
  /** Null when no answer came (refused target, connection error, timeout). */
  statusCode: number | null;
  durationMs: number;
  /** A short excerpt: the error, or the start of a non-2xx answer; never a key. */
  error: string | null;
}

/** What one attempt sent, and what came back (CONTRACT §11): kept with its delivery. */
export interface AttemptExchange {
  /** The URL and headers exactly as sent, signatures included. */
  request: { url: string; headers: Record<string, string> };
  /** Null when no answer came (timeout, refused connection); `body` is the answer's first 4096 bytes as text. */
  response: { headers: Record<string, string>; body: string } | null;
}

/**
 * An attempt as the sender reports it, always with the request it made: one that never left (a refused target, an
 * invalid URL) keeps the request it would have been, with no answer, and is a failure like a refused connection.
 */
export interface SentAttempt extends DeliveryAttempt {
  exchange: AttemptExchange;
}

/** What the sender needs of a delivery it claimed: the event as stored, and its endpoint as configured now. */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  /** The endpoint it is for, whether or not it still exists (see `endpoint`). */
  endpointId: string;
  /** Durable attempts made before this one. */
  attempts: number;
  /** The end of this claim's lease: after it, another sender may claim the delivery over. */
  leaseUntil: Date;
  /** Identifies this claim: only its holder may record an outcome or release it. */
  claimToken: string;
  /** The payload exactly as stored: the bytes sent and signed. */
  body: string;
  /** When the delivery was made, with the change that caused its event. */
  createdAt: Date;
  /** The trace of the work that wrote its event (a W3C traceparent), opaque here: its attempts continue that trace. */
  trace?: string | null;
  /**
   * The endpoint's current URL, key and state (a changed URL or key applies from the next attempt on); `failingSince`
   * as CONTRACT §11 has it, when the claim read it.
   */
  endpoint: ({ url: string | null; enabled: boolean; failingSince: Date | null } & SigningKeys) | null;
}

export type DeliveryState = { status: 'delivered' } | { status: 'pending'; nextAttemptAt: Date } | { status: 'failed' };

/** The result of one durable attempt, and the state it leaves the delivery in. */
export interface DeliveryResult {
  deliveryId: string;
  /** The endpoint it was for: its health follows the attempt. */
  endpointId: string;
  /** The claim under which it was sent: an outcome counts only while this claim is still the delivery's current one. */
  claimToken: string;
  /** The delivery's own time (its event's): where its log is kept. */
  createdAt: Date;
  attempt: DeliveryAttempt;
  /**
   * Null when no request was made at all (the endpoint gone; before claims passed over paused endpoints, also one
   * disabled or without a URL): such an attempt says nothing
   * of its health. A request the sender refused to send (a refused target) is here, without an answer, and counts as a
   * failure of the endpoint's URL.
   */
  exchange: AttemptExchange | null;
  state: DeliveryState;
}

export const isSuccess = (statusCode: number | null) => statusCode !== null && statusCode >= 200 && statusCode < 300;

/**
 * After durable attempt `attempt` (1 for the first): delivered on a 2xx; else tried again after the schedule's
 * delay for it (WEBHOOK_RETRY_SCHEDULE: the delays between attempts), or failed once the schedule is used up.
 */
export function stateAfter(
  attempt: number,
  succeeded: boolean,
  scheduleMs: readonly number[],
  now: Date,
): DeliveryState {
  if (succeeded) return { status: 'delivered' };
  const delay = scheduleMs[attempt - 1];
  return delay === undefined
    ? { status: 'failed' }
    : { status: 'pending', nextAttemptAt: new Date(now.getTime() + delay) };
}

/** A delivery as operators and integrators see it in the delivery log (CONTRACT §9, §10). */
export interface DeliveryView {
  id: string;
  /** Creation order: with `createdAt`, where a page of the log continues. */
  seq: number;
  eventId: string;
  eventType: EventType;
  /** The order (job's apiId) of its event; null for an event of no order. */
  orderId: string | null;
  accountId: string;
  scope: Scope;
  url: string | null;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  createdAt: Date;
  nextAttemptAt: Date | null;
}

/** One delivery in full (CONTRACT §11): the payload as sent, and each attempt's request and answer. */
export interface DeliveryDetail extends DeliveryView {
  endpointId: string;
  payload: string;
  /** `request` is null when nothing was sent (the endpoint gone, or, in older attempts, disabled or without a URL). */
  attempts: (DeliveryAttempt & { request: AttemptExchange['request'] | null; response: AttemptExchange['response'] })[];
}

export interface DeliveryFilter {
  accountId?: string;
  endpointId?: string;
  status?: DeliveryStatus;
  eventType?: EventType;
  /** Only deliveries of this order's events. */
  orderId?: string;
  /** Only deliveries older than this one (the last of the page before). */
  before?: DeliveryPosition;
  limit: number;
}

/** Where a delivery stands in the log, newest first. */
export interface DeliveryPosition {
  createdAt: Date;
  seq: number;
}

/** The spans the delivery statistics count attempts in (CONTRACT §10): UTC hours or days. */
export type StatsBucket = 'hour' | 'day';
export const STATS_BUCKETS: readonly StatsBucket[] = ['hour', 'day'];
/** The most buckets one answer holds: a week of hours, 90 days. */
export const STATS_MAX_BUCKETS: Record<StatsBucket, number> = { hour: 168, day: 90 };
export const STATS_BUCKET_MS: Record<StatsBucket, number> = { hour: 3_600_000, day: 86_400_000 };

/**
 * An endpoint's attempts in one bucket: how many, answered 2xx or not, and their durations' percentiles (null: none).
 */
export interface DeliveryStats {
  start: Date;
  attempts: number;
  succeeded: number;
  failed: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

/** The start of the UTC hour or day holding `at`. */
export const bucketStart = (at: Date, bucket: StatsBucket) =>
  new Date(Math.floor(at.getTime() / STATS_BUCKET_MS[bucket]) * STATS_BUCKET_MS[bucket]);
