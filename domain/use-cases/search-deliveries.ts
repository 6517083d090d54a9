import type { DeliveryView } from '../delivery.ts';
import type { Deps } from '../ports.ts';

export const DELIVERY_SEARCH_LIMIT = { default: 50, max: 100 } as const;

export type DeliverySearch = { orderId: string } | { eventId: string } | { cid: string };

/**
 * admin.deliveries.search: deliveries of every account by their order, their event, or the `_cid` of the command whose
 * outcome they tell; newest first.
 */
export async function searchDeliveries(
  deps: Pick<Deps, 'deliveryLog' | 'operatorSearch'>,
  by: DeliverySearch,
  limit: number = DELIVERY_SEARCH_LIMIT.default,
): Promise<DeliveryView[]> {
  if ('orderId' in by) return deps.deliveryLog.list({ orderId: by.orderId, limit });
  const ids = await deps.operatorSearch.deliveryIds(by, limit);
  const found = await Promise.all(ids.map((id) => deps.deliveryLog.get(id)));
  // A delivery purged between the two reads is simply not among them.
  return found.filter((d) => d !== null);
}
