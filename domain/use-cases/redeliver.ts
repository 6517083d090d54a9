import { notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';

/** admin.deliveries.redeliver: the same delivery is pending again, due now; its attempts continue. */
export async function redeliver(deps: Pick<Deps, 'deliveries' | 'clock'>, deliveryId: string): Promise<void> {
  if (!(await deps.deliveries.redeliver(deliveryId, deps.clock.now()))) throw notFound('The delivery');
}
