import type { Principal } from '../auth.ts';
import { DomainError } from '../errors.ts';
import { integratorEndpoint } from '../integrator-endpoint.ts';
import type { UnitOfWork } from './execute-command.ts';

export const FEED_LIMIT = { default: 100, max: 500 } as const;
/** Events the read path positions before it reads (the worker's sequencer does the rest in the background). */
const SEQUENCE_ON_READ = 500;

/** Where a reader stands in its feed: the position of the last event it got, and that event's time. */
export interface FeedCursor {
  position: number;
  createdAt: Date;
}

export interface FeedPage {
  items: Record<string, unknown>[];
  /** Where to go on from: the last item's cursor, else the one given (null when the feed was read from the start). */
  next: FeedCursor | null;
}

/**
 * GET /v3/events: the events of the caller's endpoint after `after`, oldest first, each exactly as delivered.
 * Pending events are positioned first, in a unit of work of their own, so that a reader sees what committed before
 * it asked; the page is read after that commit, never from positions that could still be rolled back. That round is a
 * courtesy: the page is correct without it (the worker's sequencer positions the rest), so its failure fails nothing.
 * A cursor is GONE once the retention purge has deleted an event after it: the reader would miss that event.
 */
export async function readEventFeed(
  units: { transact: UnitOfWork; read: UnitOfWork },
  principal: Principal,
  input: { after: FeedCursor | null; limit?: number; retentionDays: number },
): Promise<FeedPage> {
  const limit = Math.min(input.limit ?? FEED_LIMIT.default, FEED_LIMIT.max);
  const endpoint = await units.read(async (deps) => {
    const found = await integratorEndpoint(deps, principal);
    if (input.after && input.after.position < (await deps.eventFeed.purgedThrough(found.id))) {
      throw new DomainError('GONE', `Events after this cursor have been purged (they are kept ${input.retentionDays} days): start again without "after".`);
    }
    return found;
  });
  await units.transact((deps) => deps.eventFeed.sequence(SEQUENCE_ON_READ)).catch(() => 0);
  const entries = await units.read((deps) => deps.eventFeed.page(endpoint.id, input.after?.position ?? 0, limit));
  const last = entries.at(-1);
  return { items: entries.map((e) => e.payload), next: last ? { position: last.position, createdAt: last.createdAt } : input.after };
}
