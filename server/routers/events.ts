import type { Principal } from '../../domain/auth.ts';
import type { Deps } from '../../domain/ports.ts';
import { readEventFeed } from '../../domain/use-cases/read-event-feed.ts';
import type { Context } from '../context.ts';
import { encodeFeedCursor } from '../cursors.ts';
import { failureLevel } from '../logger.ts';
import { guardedProcedure } from '../pipeline/procedures.ts';
import { router } from '../trpc.ts';
import { eventRoutes } from './events.contract.ts';

const feedRead = guardedProcedure.meta(eventRoutes.feed.meta).input(eventRoutes.feed.input);

/** One page of the caller's feed: each event's JSON text as stored, and the cursor to go on from. */
async function feedPage(
  ctx: Pick<Context, 'services' | 'log'> & { deps: Deps; principal: Principal },
  input: typeof eventRoutes.feed.input._output,
) {
  const { after, limit, orderId } = input;
  const page = await readEventFeed(
    ctx.deps,
    ctx.principal,
    {
      after: after ?? null,
      limit,
      orderId,
      retentionDays: ctx.services.config.eventRetentionDays,
    },
    {
      sequencingFailed: (err) =>
        ctx.log[failureLevel(err)](
          { err },
          'event feed: the positioning round after a short page failed; answered what earlier rounds positioned',
        ),
    },
  );
  return { items: page.items, next: page.next && encodeFeedCursor(page.next) };
}

/**
 * GET /v3/events for REST callers (server/http/events-feed.ts): the same guard, input and errors as the documented
 * procedure, answering each event's stored JSON text, which the route writes out as it is (a page of 500 is about
 * 430 KB of JSON that would otherwise be parsed and written again).
 */
export const feedTextRouter = router({
  page: feedRead.query(({ ctx, input }) => feedPage(ctx, input)),
});

/** The event feed of the caller's endpoint (CONTRACT §10). */
export const eventsRouter = router({
  // Describes the path in the document and serves typed RPC clients; REST clients get the same page written from the
  // stored text (feedTextRouter).
  feed: feedRead.output(eventRoutes.feed.output).query(async ({ ctx, input }) => {
    const { items, next } = await feedPage(ctx, input);
    return { items: items.map((text) => JSON.parse(text) as Record<string, unknown>), next };
  }),
});
