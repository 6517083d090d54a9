import type { Principal } from '../auth.ts';
import type { DeliveryDetail, DeliveryPosition, DeliveryStatus, DeliveryView } from '../delivery.ts';
import { notFound } from '../errors.ts';
import { integratorEndpoint } from '../integrator-endpoint.ts';
import type { Deps } from '../ports.ts';

export const OWN_DELIVERY_LIMIT = { default: 50, max: 100 } as const;

/** GET /v3/webhook-deliveries: the caller's endpoint's deliveries, newest first; `next` is null on the last page. */
export async function listOwnDeliveries(
  deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'deliveryLog'>,
  principal: Principal,
  input: { status?: DeliveryStatus; limit?: number; before?: DeliveryPosition },
): Promise<{ items: DeliveryView[]; next: DeliveryPosition | null }> {
  const endpoint = await integratorEndpoint(deps, principal);
  const limit = Math.min(input.limit ?? OWN_DELIVERY_LIMIT.default, OWN_DELIVERY_LIMIT.max);
  const rows = await deps.deliveryLog.list({ endpointId: endpoint.id, status: input.status, before: input.before, limit: limit + 1 });
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next: rows.length > limit && last ? { createdAt: last.createdAt, seq: last.seq } : null };
}

/** GET /v3/webhook-deliveries/{id}: one delivery of the caller's endpoint in full; any other is not found. */
export async function getOwnDelivery(deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'deliveryLog'>, principal: Principal, deliveryId: string): Promise<DeliveryDetail> {
  const endpoint = await integratorEndpoint(deps, principal);
  const delivery = await deps.deliveryLog.get(deliveryId, endpoint.id);
  if (!delivery) throw notFound('The delivery');
  return delivery;
}

/** POST /v3/webhook-deliveries/{id}/redeliver: one delivery of the caller's endpoint is pending again, due now. */
export async function redeliverOwn(deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'deliveryLog' | 'clock'>, principal: Principal, deliveryId: string) {
  const endpoint = await integratorEndpoint(deps, principal);
  if (!(await deps.deliveryLog.redeliver(deliveryId, deps.clock.now(), endpoint.id))) throw notFound('The delivery');
  return { id: deliveryId, status: 'pending' as const };
}

/** POST /v3/webhook-deliveries/redeliver-failed: every failed delivery of the caller's endpoint since `since`, again. */
export async function redeliverOwnFailed(deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'deliveryLog' | 'clock'>, principal: Principal, since: Date) {
  const endpoint = await integratorEndpoint(deps, principal);
  return { count: await deps.deliveryLog.redeliverFailed({ endpointId: endpoint.id }, since, deps.clock.now()) };
}
