import type { Principal } from '../auth.ts';
import {
  bucketStart,
  type DeliveryDetail,
  type DeliveryPosition,
  type DeliveryStats,
  type DeliveryStatus,
  type DeliveryView,
  STATS_BUCKET_MS,
  STATS_MAX_BUCKETS,
  type StatsBucket,
} from '../delivery.ts';
import { invalid, notFound } from '../errors.ts';
import type { EventType } from '../event.ts';
import { integratorEndpoint } from '../integrator-endpoint.ts';
import type { Deps } from '../ports.ts';

export const OWN_DELIVERY_LIMIT = { default: 50, max: 100 } as const;

/** GET /v3/webhook-deliveries: the caller's endpoint's deliveries, newest first; `next` is null on the last page. */
export async function listOwnDeliveries(
  deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'deliveryLog'>,
  principal: Principal,
  input: {
    status?: DeliveryStatus;
    eventType?: EventType;
    orderId?: string;
    limit?: number;
    before?: DeliveryPosition;
  },
): Promise<{ items: DeliveryView[]; next: DeliveryPosition | null }> {
  const endpoint = await integratorEndpoint(deps, principal);
  const limit = Math.min(input.limit ?? OWN_DELIVERY_LIMIT.default, OWN_DELIVERY_LIMIT.max);
  const { status, eventType, orderId, before } = input;
  const rows = await deps.deliveryLog.list({
    endpointId: endpoint.id,
    status,
    eventType,
    orderId,
    before,
    limit: limit + 1,
  });
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next: rows.length > limit && last ? { createdAt: last.createdAt, seq: last.seq } : null };
}

/** GET /v3/webhook-deliveries/{id}: one delivery of the caller's endpoint in full; any other is not found. */
export async function getOwnDelivery(
  deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'deliveryLog'>,
  principal: Principal,
  deliveryId: string,
): Promise<DeliveryDetail> {
  const endpoint = await integratorEndpoint(deps, principal);
  const delivery = await deps.deliveryLog.get(deliveryId, endpoint.id);
  if (!delivery) throw notFound('The delivery');
  return delivery;
}

/** POST /v3/webhook-deliveries/{id}/redeliver: one delivery of the caller's endpoint is pending again, due now. */
export async function redeliverOwn(
  deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'deliveryLog' | 'clock'>,
  principal: Principal,
  deliveryId: string,
) {
  const endpoint = await integratorEndpoint(deps, principal);
  if (!(await deps.deliveryLog.redeliver(deliveryId, deps.clock.now(), endpoint.id))) throw notFound('The delivery');
  return { id: deliveryId, status: 'pending' as const };
}

/**
 * POST /v3/webhook-deliveries/redeliver-failed: every failed delivery of the caller's endpoint since `since`, again.
 */
export async function redeliverOwnFailed(
  deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'deliveryLog' | 'clock'>,
  principal: Principal,
  since: Date,
) {
  const endpoint = await integratorEndpoint(deps, principal);
  return { count: await deps.deliveryLog.redeliverFailed({ endpointId: endpoint.id }, since, deps.clock.now()) };
}

/**
 * GET /v3/webhook-deliveries/stats (CONTRACT §10): the caller's endpoint's attempts per UTC hour or day, every bucket
 * from the one holding `from` to the one holding `to`. Defaults: `to` now, `from` a day before `to`, hours.
 */
export async function ownDeliveryStats(
  deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'deliveryLog' | 'clock'>,
  principal: Principal,
  input: { from?: Date; to?: Date; bucket?: StatsBucket },
): Promise<{ bucket: StatsBucket; items: DeliveryStats[] }> {
  const bucket = input.bucket ?? 'hour';
  const to = input.to ?? deps.clock.now();
  const from = input.from ?? new Date(to.getTime() - 86_400_000);
  if (from > to) throw invalid('from', '"from" is after "to".');
  const buckets =
    (bucketStart(to, bucket).getTime() - bucketStart(from, bucket).getTime()) / STATS_BUCKET_MS[bucket] + 1;
  if (buckets > STATS_MAX_BUCKETS[bucket]) {
    throw invalid(
      'from',
      `At most ${STATS_MAX_BUCKETS[bucket]} ${bucket} buckets in one answer; this span has ${buckets}.`,
    );
  }
  const endpoint = await integratorEndpoint(deps, principal);
  return { bucket, items: await deps.deliveryLog.stats(endpoint.id, from, to, bucket) };
}
