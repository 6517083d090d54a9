import { z } from 'zod';
import { FEED_LIMIT } from '../../domain/use-cases/read-event-feed.ts';
import { feedCursor } from '../cursors.ts';
import { reference } from '../wire-text.ts';
import { deliveredEvent } from '../openapi/payload-docs.ts';
import { boundedQueryInt } from './shared.contract.ts';

/** GET /v3/events (CONTRACT §10). */
export const events = {
  feed: z.object({
    after: feedCursor.optional(),
    limit: boundedQueryInt(1, FEED_LIMIT.max, `1…${FEED_LIMIT.max}, default ${FEED_LIMIT.default}.`).optional(),
    orderId: reference()
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
