import type { DeliveryDetail } from '../delivery.ts';
import { notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';

/** admin.deliveries.get: one delivery in full, whoever's it is. */
export async function getDelivery(deps: Pick<Deps, 'deliveries'>, deliveryId: string): Promise<DeliveryDetail> {
  const delivery = await deps.deliveries.get(deliveryId);
  if (!delivery) throw notFound('The delivery');
  return delivery;
}
