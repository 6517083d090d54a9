import { RESULT_RETENTION_MS } from '../command.ts';
import type { Deps } from '../ports.ts';

/** Removes, a batch at a time, the commands whose result is past the 24 h it is kept; answers how many went. */
export function purgeCommandResults(deps: Pick<Deps, 'commandQueue' | 'clock'>, batch: number): Promise<number> {
  return deps.commandQueue.purgeFinished(new Date(deps.clock.now().getTime() - RESULT_RETENTION_MS), batch);
}
