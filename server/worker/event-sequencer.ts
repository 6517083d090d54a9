import { sequenceEvents } from '../../domain/use-cases/sequence-events.ts';
import type { Services } from '../services.ts';
import type { WorkerTask } from './worker.ts';

/**
 * Gives committed events their feed positions in the background, so that a feed read finds them positioned (reads
 * position what is left themselves, so the feed never waits for this task). Rounds run while they fill a batch.
 */
export function eventSequencer(services: Services, batch = 1000): WorkerTask {
  return {
    name: 'event feed sequencer',
    idleDelayMs: 500,
    async runOnce() {
      return (await services.unitOfWork().statements((deps) => sequenceEvents(deps, batch))) === batch;
    },
  };
}
