import type { Deps } from '../ports.ts';

/**
 * Deletes, a batch at a time, events (and their finished deliveries) past EVENT_RETENTION_DAYS; answers how many.
 * Makes the days ahead ready for the history to come on the way, on the service's clock (which tests move).
 * Clears the rotated-out signature keys whose window has ended on the way: they count nowhere already, and need not be
 * kept.
 */
export async function purgeRetainedEvents(
  deps: Pick<Deps, 'deliveryLog' | 'webhookConfigs' | 'clock'>,
  retentionDays: number,
  batch: number,
): Promise<number> {
  const now = deps.clock.now();
  const horizon = new Date(now.getTime() - retentionDays * 86_400_000);
  await deps.webhookConfigs.dropExpiredKeys(now);
  // Never a day the same purge would drop (a horizon ahead of the clock: a purge of a process whose clock runs ahead).
  await deps.deliveryLog.prepareDays(horizon > now ? horizon : now);
  return deps.deliveryLog.purgeBefore(horizon, batch);
}
