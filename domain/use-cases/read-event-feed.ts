import type { Principal } from '../auth.ts';
import { DomainError } from '../errors.ts';
import { integratorEndpoint } from '../integrator-endpoint.ts';
import type { Deps } from '../ports.ts';

export const FEED_LIMIT = { default: 100, max: 500 } as const;
/** Events a read positions when its page comes back short (the worker's sequencer does the rest in the background). */
const SEQUENCE_ON_READ = 500;

/** Where a reader stands in its feed: the position of the last event it got, and that event's time. */
export interface FeedCursor {
  position: number;
  createdAt: Date;
}

/** What a read tells the process it runs in. */
export interface FeedReadPorts {
  /** The positioning round after a short page failed: the page is what earlier rounds positioned. */
  sequencingFailed(error: unknown): void;
}

export interface FeedPage {
  /** Each event's JSON text exactly as delivered (stored so, and handed on without being parsed). */
  items: string[];
  /** Where to go on from: the last item's cursor, else the one given (null when the feed was read from the start). */
  next: FeedCursor | null;
}

/**
 * GET /v3/events: the events of the caller's endpoint after `after`, oldest first, each exactly as delivered (one
 * order's, with `orderId`: the same cursors, the same rules).
 * A page that comes back short is read on after a positioning round: events committed but not positioned yet are
 * positioned (the feed commits that round before it answers, after any round another process is running: that one may
 * not hold them), so that a reader sees what committed before it asked; the rest is read after that, never from
 * positions that could still be rolled back. A full page needs no round: whatever gets a position later comes after
 * it. The round is a courtesy: when it fails, the failure is told to `ports` and the page is answered all the same
 * (the worker's sequencer positions the rest).
 * A cursor is GONE once it is older than the retention window (CONTRACT §10), decided from its own time on the clock,
 * whether or not the purge has got that far; or once the purge has deleted an event after it (its horizon is read with
 * each page, in the same snapshot).
 */
export async function readEventFeed(
  deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'eventFeed' | 'clock'>,
  principal: Principal,
  input: { after: FeedCursor | null; limit?: number; orderId?: string; retentionDays: number },
  ports: FeedReadPorts,
): Promise<FeedPage> {
  const limit = Math.min(input.limit ?? FEED_LIMIT.default, FEED_LIMIT.max);
  const gone = () =>
    new DomainError(
      'GONE',
      `Events are kept ${input.retentionDays} days, and what follows this cursor is past them: start again without "after".`,
    );
  const endpoint = await integratorEndpoint(deps, principal);
  const { after } = input;
  if (after && after.createdAt.getTime() < deps.clock.now().getTime() - input.retentionDays * 86_400_000) throw gone();
  // The horizon is still needed within the window: positions follow commits, times follow inserts, so an event written
  // before the cursor's (in a transaction that committed later) can sit after it in the feed and be purged first. The
  // purge also works on its own process's clock and EVENT_RETENTION_DAYS, which may run ahead of this one's.
  const first = await deps.eventFeed.page(endpoint.id, after?.position ?? 0, limit, input.orderId);
  if (after && after.position < first.purgedThrough) throw gone();
  let entries = first.entries;
  if (entries.length < limit) {
    try {
      await deps.eventFeed.sequence(SEQUENCE_ON_READ, true);
    } catch (error) {
      ports.sequencingFailed(error);
    }
    const from = entries.at(-1)?.position ?? after?.position ?? 0;
    const rest = await deps.eventFeed.page(endpoint.id, from, limit - entries.length, input.orderId);
    // A purge between the two reads that deleted events after `from` ends the page with the first read (the next read
    // judges its cursor), or makes it GONE when that read had nothing after a cursor.
    const purgedBetween = from < rest.purgedThrough && (Boolean(after) || entries.length > 0);
    if (purgedBetween && entries.length === 0) throw gone();
    if (!purgedBetween) entries = entries.concat(rest.entries);
  }
  const last = entries.at(-1);
  return {
    items: entries.map((e) => e.payload),
    next: last ? { position: last.position, createdAt: last.createdAt } : after,
  };
}
