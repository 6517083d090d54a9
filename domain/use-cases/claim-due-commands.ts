import type { ClaimedCommand } from '../command.ts';
import type { Deps } from '../ports.ts';

/** The executor's next batch: accepted commands nobody holds, each claimed for `leaseMs` from now. */
export function claimDueCommands(
  deps: Pick<Deps, 'commandQueue' | 'clock'>,
  batch: number,
  leaseMs: number,
): Promise<ClaimedCommand[]> {
  const now = deps.clock.now();
  return deps.commandQueue.claimDue(batch, now, new Date(now.getTime() + leaseMs));
}
