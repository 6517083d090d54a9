import { readEventFeed } from '../../domain/use-cases/read-event-feed.ts';
import { encodeFeedCursor } from '../cursors.ts';
import { failureLevel } from '../logger.ts';
import { events } from './events.contract.ts';
import { integratorProcedure, router } from '../trpc.ts';

/** The event feed of the caller's endpoint (CONTRACT §10). */
export const eventsRouter = router({
  feed: integratorProcedure
    .meta({
      openapi: { method: 'GET', path: '/v3/events', tags: ['events'], summary: 'Your events, oldest first, without gaps',
        description: 'Every event your endpoint receives (or would receive, had it a URL and were it enabled), each exactly as '
          + 'delivered, in the order the events committed. Follow `next` (as `after`) to catch up after an outage: a reader that '
          + 'follows it from the start sees every retained event exactly once, however many writers commit at once. A child '
          + 'partner without its own configuration reads its master\'s feed. Events are kept EVENT_RETENTION_DAYS (default 30); '
          + 'a cursor older than that (the time of the event it follows) is 410: start again without `after`.',
        successDescription: 'A page of events and the cursor to go on from.' },
      rest: { problems: [400, 403, 404, 410] },
    })
    .input(events.feed)
    .output(events.feedAnswer)
    .query(async ({ ctx, input }) => {
      const page = await readEventFeed(ctx.deps, ctx.principal, { after: input.after ?? null, limit: input.limit, orderId: input.orderId, retentionDays: ctx.services.config.eventRetentionDays }, {
        sequencingFailed: (err) => ctx.log[failureLevel(err)]({ err }, 'event feed: the positioning round before the read failed; read what earlier rounds positioned'),
      });
      return { items: page.items, next: page.next && encodeFeedCursor(page.next) };
    }),
});
