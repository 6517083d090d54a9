import { z } from 'zod';
import { FEED_LIMIT } from '../../domain/use-cases/read-event-feed.ts';
import { feedCursor } from '../cursors.ts';
import { deliveredEvent } from '../openapi/payload-docs.ts';
import { lookupReference } from '../wire-text.ts';
import type { RouteContract } from './contracts.ts';
import { boundedQueryInt } from './shared.contract.ts';

/** GET /v3/events (CONTRACT §10). */
export const events = {
  feed: z.object({
    after: feedCursor.optional(),
    limit: boundedQueryInt(1, FEED_LIMIT.max, `1…${FEED_LIMIT.max}, default ${FEED_LIMIT.default}.`).optional(),
    orderId: lookupReference()
      .meta({
        description:
          "Only this order's events (its `orderId`, a job's apiId), in feed order; `next` and `after` work as without it.",
        examples: ['WB-2026-0042'],
      })
      .optional(),
  }),
  feedAnswer: z.object({
    items: z.array(deliveredEvent),
    next: z
      .string()
      .nullable()
      .describe(
        'Pass as `after` to go on (also when `items` is empty: new events come after it); null only when the feed is empty and no `after` was given.',
      ),
  }),
};

export const eventRoutes = {
  feed: {
    meta: {
      unit: 'replica',
      roles: ['brand', 'partner'],
      openapi: {
        method: 'GET',
        path: '/v3/events',
        tags: ['events'],
        summary: 'Your events, oldest first, without gaps',
        description:
          'Every event your endpoint receives (or would receive, had it a URL and were it enabled), each exactly as ' +
          'delivered, in the order the events committed. Follow `next` (as `after`) to catch up after an outage: a ' +
          'reader that follows it from the start sees every retained event exactly once, however many writers commit ' +
          "at once. A child partner without its own configuration reads its master's feed. Events are kept " +
          'EVENT_RETENTION_DAYS (default 30); a cursor older than that (the time of the event it follows) is 410: ' +
          'start again without `after`.',
        successDescription: 'A page of events and the cursor to go on from.',
      },
      rest: { problems: [400, 403, 404, 410] },
    },
    input: events.feed,
    output: events.feedAnswer,
  },
} satisfies Record<string, RouteContract>;
