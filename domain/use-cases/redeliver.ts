import { notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';

/** admin.deliveries.redeliver: the same delivery is pending again, due now; its attempts continue. */
export async function redeliver(deps: Pick<Deps, 'deliveryLog' | 'clock'>, deliveryId: string): Promise<void> {
  if (!(await deps.deliveryLog.redeliver(deliveryId, deps.clock.now()))) throw notFound('The delivery');
}

/** admin.deliveries.redeliverFailed: every failed delivery of an account created since a time is pending again. */
export async function redeliverFailedOf(
  deps: Pick<Deps, 'deliveryLog' | 'clock'>,
  accountId: string,
  since: Date,
): Promise<{ count: number }> {
  return { count: await deps.deliveryLog.redeliverFailed({ accountId }, since, deps.clock.now()) };
}
