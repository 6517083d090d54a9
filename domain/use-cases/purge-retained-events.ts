import type { Deps } from '../ports.ts';

/** Deletes, a batch at a time, events (and their finished deliveries) past EVENT_RETENTION_DAYS; answers how many. */
export function purgeRetainedEvents(deps: Pick<Deps, 'deliveries' | 'clock'>, retentionDays: number, batch: number): Promise<number> {
  return deps.deliveries.purgeBefore(new Date(deps.clock.now().getTime() - retentionDays * 86_400_000), batch);
}
