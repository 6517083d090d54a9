import { type ClaimedDelivery, type DeliveryResult, isSuccess, stateAfter } from '../delivery.ts';
import type { EndpointNotice } from '../endpoint-health.ts';
import type { Deps } from '../ports.ts';
import { keysInForce, pairsInForce } from '../webhook-config.ts';

// The sender's three steps, each one call: claim what is due, attempt one delivery, record what attempts found. How
// often and how many at once is the worker's (server/worker/delivery-round.ts).

/** What a sender holds and may hold: its claims' length, and how much of one endpoint it may take. */
export interface ClaimLimits {
  limit: number;
  leaseMs: number;
  /** The most deliveries of one endpoint the sender may hold at once. */
  perEndpoint: number;
  /** The endpoints the sender holds deliveries of, with how many. */
  held: ReadonlyMap<string, number>;
  /** Whether deliveries may have been committed since the last claim (see ClaimRequest). */
  lookForNew: boolean;
}

/** The sender's next batch: due deliveries nobody holds, each claimed for `leaseMs` from now. */
export function claimDueDeliveries(
  deps: Pick<Deps, 'deliveryQueue' | 'clock' | 'ids'>,
  limits: ClaimLimits,
): Promise<ClaimedDelivery[]> {
  const now = deps.clock.now();
  return deps.deliveryQueue.claimDue({
    limit: limits.limit,
    now,
    leaseUntil: new Date(now.getTime() + limits.leaseMs),
    claimToken: deps.ids.newId(),
    perEndpoint: limits.perEndpoint,
    held: limits.held,
    lookForNew: limits.lookForNew,
  });
}

/**
 * One durable attempt of a claimed delivery, outside any transaction: sent to the endpoint's current URL with its
 * current keys, and judged by its outcome. A claim hands out nothing of an endpoint disabled or without a URL (its
 * deliveries wait as they are, CONTRACT §11); one whose endpoint is gone, or that came without a URL anyway, fails at
 * once without a request, and may be sent again (redelivered).
 * `traceparent`: the attempt's own trace context, which its request carries.
 */
export async function attemptDelivery(
  deps: Pick<Deps, 'webhookSender' | 'clock'>,
  claimed: ClaimedDelivery,
  scheduleMs: readonly number[],
  traceparent: string | null = null,
): Promise<DeliveryResult> {
  const { endpoint } = claimed;
  if (!endpoint?.url || !endpoint.enabled) {
    const error = endpoint
      ? endpoint.enabled
        ? 'the endpoint has no URL'
        : 'the endpoint is disabled'
      : 'the endpoint no longer exists';
    return {
      deliveryId: claimed.id,
      endpointId: claimed.endpointId,
      claimToken: claimed.claimToken,
      createdAt: claimed.createdAt,
      attempt: { at: deps.clock.now(), statusCode: null, durationMs: 0, error },
      exchange: null,
      state: { status: 'failed' },
    };
  }
  const now = deps.clock.now();
  const { exchange, ...attempt } = await deps.webhookSender.send({
    url: endpoint.url,
    eventId: claimed.eventId,
    body: claimed.body,
    signatureKeys: keysInForce(endpoint, now),
    asymmetricKeys: pairsInForce(endpoint, now),
    traceparent,
  });
  return {
    deliveryId: claimed.id,
    endpointId: claimed.endpointId,
    claimToken: claimed.claimToken,
    createdAt: claimed.createdAt,
    attempt,
    exchange,
    state: stateAfter(claimed.attempts + 1, isSuccess(attempt.statusCode), scheduleMs, deps.clock.now()),
  };
}

/** Stores what the attempts found, and the health of their endpoints; answers what their contacts are to be told. */
export function recordDeliveries(
  deps: Pick<Deps, 'deliveryQueue' | 'clock'>,
  results: readonly DeliveryResult[],
  disableAfterMs: number,
): Promise<EndpointNotice[]> {
  return deps.deliveryQueue.record(results, deps.clock.now(), disableAfterMs);
}
