import { isSuccess, stateAfter, type ClaimedDelivery, type DeliveryResult } from '../delivery.ts';
import type { Deps } from '../ports.ts';

/** The sender's next batch: due deliveries nobody holds, each claimed for `leaseMs` from now. */
export function claimDueDeliveries(deps: Pick<Deps, 'deliveries' | 'clock' | 'ids'>, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const now = deps.clock.now();
  return deps.deliveries.claimDue(limit, now, new Date(now.getTime() + leaseMs), deps.ids.newId());
}

/**
 * One durable attempt of a claimed delivery, outside any transaction: sent to the endpoint's current URL with its
 * current key, and judged by its outcome. An endpoint disabled, or left without a URL, since the event was
 * written gets nothing: the delivery fails at once, and may be sent again (redelivered) once the endpoint is back.
 */
export async function attemptDelivery(deps: Pick<Deps, 'webhookSender' | 'clock'>, claimed: ClaimedDelivery, scheduleMs: readonly number[]): Promise<DeliveryResult> {
  const { endpoint } = claimed;
  if (!endpoint?.url || !endpoint.enabled) {
    const error = endpoint ? (endpoint.enabled ? 'the endpoint has no URL' : 'the endpoint is disabled') : 'the endpoint no longer exists';
    return { deliveryId: claimed.id, claimToken: claimed.claimToken, attempt: { at: deps.clock.now(), statusCode: null, durationMs: 0, error }, state: { status: 'failed' } };
  }
  const attempt = await deps.webhookSender.send({ url: endpoint.url, eventId: claimed.eventId, body: claimed.body, signatureKey: endpoint.signatureKey });
  return { deliveryId: claimed.id, claimToken: claimed.claimToken, attempt, state: stateAfter(claimed.attempts + 1, isSuccess(attempt.statusCode), scheduleMs, deps.clock.now()) };
}

/** Gives back claimed deliveries that will not be sent by this sender after all. */
export function releaseDeliveries(deps: Pick<Deps, 'deliveries'>, claims: readonly ClaimedDelivery[]): Promise<void> {
  return deps.deliveries.release(claims);
}

/** Stores what the attempts found, in one unit of work. */
export function recordDeliveries(deps: Pick<Deps, 'deliveries' | 'clock'>, results: readonly DeliveryResult[]): Promise<void> {
  return deps.deliveries.record(results, deps.clock.now());
}
