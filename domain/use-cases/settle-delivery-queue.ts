import type { Deps } from '../ports.ts';

/**
 * Sets right the queue's flags a race left wrong (DeliveryQueue.settle); answers how many. Each run is a pass over the
 * whole queue, so it runs on a cadence of its own, not with every batch of a purge.
 */
export function settleDeliveryQueue(deps: Pick<Deps, 'deliveryQueue'>): Promise<number> {
  return deps.deliveryQueue.settle();
}
