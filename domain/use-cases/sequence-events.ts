import type { Deps } from '../ports.ts';

/** The worker's round of the event feed's sequencer: positions up to `batch` committed events; answers how many. */
export function sequenceEvents(deps: Pick<Deps, 'eventFeed'>, batch: number): Promise<number> {
  return deps.eventFeed.sequence(batch);
}
