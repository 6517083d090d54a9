import type { DeliveryDetail } from '../delivery.ts';
import { notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';

/** admin.deliveries.get: one delivery in full, whoever's it is. */
export async function getDelivery(deps: Pick<Deps, 'deliveryLog'>, deliveryId: string): Promise<DeliveryDetail> {
  const delivery = await deps.deliveryLog.get(deliveryId);
  if (!delivery) throw notFound('The delivery');
  return delivery;
}
