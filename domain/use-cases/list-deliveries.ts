import type { DeliveryDetail, DeliveryFilter, DeliveryView } from '../delivery.ts';
import { notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';

export const DELIVERY_LIST_LIMIT = { default: 100, max: 500 } as const;

/** admin.deliveries.list: the delivery log, newest first, with every attempt. */
export function listDeliveries(deps: Pick<Deps, 'deliveries'>, filter: Partial<DeliveryFilter>): Promise<DeliveryView[]> {
  return deps.deliveries.list({ ...filter, limit: Math.min(filter.limit ?? DELIVERY_LIST_LIMIT.default, DELIVERY_LIST_LIMIT.max) });
}

/** admin.deliveries.get: one delivery in full, whoever's it is. */
export async function getDelivery(deps: Pick<Deps, 'deliveries'>, deliveryId: string): Promise<DeliveryDetail> {
  const delivery = await deps.deliveries.get(deliveryId);
  if (!delivery) throw notFound('The delivery');
  return delivery;
}
