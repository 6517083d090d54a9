import type { DeliveryFilter, DeliveryView } from '../delivery.ts';
import type { Deps } from '../ports.ts';

export const DELIVERY_LIST_LIMIT = { default: 100, max: 500 } as const;

/** admin.deliveries.list: the delivery log, newest first, with every attempt. */
export function listDeliveries(
  deps: Pick<Deps, 'deliveryLog'>,
  filter: Partial<DeliveryFilter>,
): Promise<DeliveryView[]> {
  return deps.deliveryLog.list({
    ...filter,
    limit: Math.min(filter.limit ?? DELIVERY_LIST_LIMIT.default, DELIVERY_LIST_LIMIT.max),
  });
}
