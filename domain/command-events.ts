import type { CommandEnvelope, CommandOutcome } from './command.ts';
import { renderCommandOutcome } from './payloads.ts';
import type { Deps } from './ports.ts';
import { eventFor, type Receiver } from './receivers.ts';

/**
 * Tells the sender how its command ended: a CommandResultEvent or CommandErrorEvent in the sender's version, stored
 * in the outbox (delivered to the sender's endpoint) and answered, for storing as the command's pollable result.
 */
export async function emitCommandOutcome(
  deps: Pick<Deps, 'events' | 'ids' | 'clock'>,
  sender: Receiver,
  command: CommandEnvelope,
  outcome: CommandOutcome,
): Promise<Record<string, unknown>> {
  const type = outcome.status === 'succeeded' ? 'CommandResultEvent' : 'CommandErrorEvent';
  const event = eventFor(deps, sender, type, null, (eid, format) =>
    renderCommandOutcome(command, outcome, format.version, eid),
  );
  await deps.events.add([event]);
  return event.payload;
}
