import type { DeliveryView } from '../delivery.ts';
import type { Deps } from '../ports.ts';
import { receiverOf } from '../receivers.ts';

export const DELIVERY_SEARCH_LIMIT = { default: 50, max: 100 } as const;

export type DeliverySearch = { orderId: string } | { eventId: string } | { cid: string };

/**
 * admin.deliveries.search: deliveries of every account by their order, their event, or the `_cid` of the command whose
 * outcome they tell; newest first. One order's are read endpoint by endpoint, from the index of each endpoint's orders:
 * its brand's endpoint and its partner's (its own or its master's), as they are now (a partner the order had before
 * is not searched). Without an endpoint, the log would be read whole.
 */
export async function searchDeliveries(
  deps: Pick<Deps, 'deliveryLog' | 'operatorSearch' | 'jobs' | 'accounts' | 'webhookConfigs'>,
  by: DeliverySearch,
  limit: number = DELIVERY_SEARCH_LIMIT.default,
): Promise<DeliveryView[]> {
  if ('orderId' in by) {
    const job = await deps.jobs.get(by.orderId);
    if (!job) return [];
    const receivers = await Promise.all([
      receiverOf(deps, job.brandAccountId, 'brand'),
      ...(job.partnerId ? [receiverOf(deps, job.partnerId, 'partner')] : []),
    ]);
    const endpoints = [...new Set(receivers.flatMap((r) => (r.endpoint ? [r.endpoint.id] : [])))];
    const pages = await Promise.all(
      endpoints.map((endpointId) => deps.deliveryLog.list({ endpointId, orderId: by.orderId, limit })),
    );
    return pages
      .flat()
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.seq - a.seq)
      .slice(0, limit);
  }
  const ids = await deps.operatorSearch.deliveryIds(by, limit);
  const found = await Promise.all(ids.map((id) => deps.deliveryLog.get(id)));
  // A delivery purged between the two reads is simply not among them.
  return found.filter((d) => d !== null);
}
