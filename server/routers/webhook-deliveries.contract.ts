import { z } from 'zod';
import { DELIVERY_STATUSES, STATS_BUCKETS, STATS_MAX_BUCKETS } from '../../domain/delivery.ts';
import { EVENT_TYPES } from '../../domain/event.ts';
import { OWN_DELIVERY_LIMIT } from '../../domain/use-cases/own-deliveries.ts';
import { deliveryCursor } from '../cursors.ts';
import { lookupReference } from '../wire-text.ts';
import type { RouteContract } from './contracts.ts';
import { boundedQueryInt, count, dateTime, httpStatus } from './shared.contract.ts';

const attempt = z.object({
  at: z.string().describe('When the try was made (ISO 8601, UTC).'),
  statusCode: httpStatus().nullable().describe('Null when no answer came (refused target, connection error, timeout).'),
  durationMs: count(),
  error: z.string().nullable().describe('The error, or the start of a non-2xx answer.'),
});

const headers = z.record(z.string(), z.string());
const listed = z.object({
  id: z.string(),
  eventId: z.string().describe("The event's `_eid`, also the `webhook-id` header."),
  eventType: z.enum(EVENT_TYPES),
  orderId: z
    .string()
    .nullable()
    .describe("The order (`orderId` of its events, a job's apiId) the event is about; null for an event of no order."),
  url: z
    .string()
    .nullable()
    .describe("The URL the last attempt went to (your endpoint's URL of the moment before any attempt)."),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.array(attempt).describe('Every try, oldest first.'),
  createdAt: z.string(),
  nextAttemptAt: z.string().nullable().describe('When a pending delivery is tried next; null otherwise.'),
});

/** The caller's delivery log and replay (CONTRACT §10), and one delivery in full (§11). */
export const webhookDeliveries = {
  deliveries: z.object({
    // (Described before .optional(): trpc-to-openapi documents a query parameter from the inner schema.)
    status: z.enum(DELIVERY_STATUSES).describe('Only deliveries in this state.').optional(),
    eventType: z.enum(EVENT_TYPES).describe('Only deliveries of events of this type.').optional(),
    orderId: lookupReference()
      .meta({
        description: "Only deliveries of this order's events (its `orderId`, a job's apiId).",
        examples: ['WB-2026-0042'],
      })
      .optional(),
    limit: boundedQueryInt(
      1,
      OWN_DELIVERY_LIMIT.max,
      `1…${OWN_DELIVERY_LIMIT.max}, default ${OWN_DELIVERY_LIMIT.default}.`,
    ).optional(),
    before: deliveryCursor.optional(),
  }),
  deliveriesAnswer: z.object({
    items: z.array(listed),
    next: z.string().nullable().describe('Pass as `before` for older deliveries; null on the last page.'),
  }),
  delivery: z.object({
    id: lookupReference().meta({
      description: "The delivery's id, from GET /v3/webhook-deliveries.",
      examples: ['7c9e6679-7425-40de-944b-e07fc1f90ae7'],
    }),
  }),
  deliveryAnswer: listed.extend({
    payload: z.string().describe('The exact JSON text that was sent (and signed), as a string.'),
    attempts: z
      .array(
        attempt.extend({
          request: z
            .object({
              url: z.string(),
              headers: headers.describe('The headers sent, signature values included.'),
            })
            .nullable()
            .describe(
              'What was sent; null when nothing was (the endpoint was gone, or, before 2026-12-01, disabled or ' +
                'had no URL).',
            ),
          response: z
            .object({
              headers,
              body: z.string().describe('The first 4096 bytes of the answer as UTF-8 text; "" when it had none.'),
            })
            .nullable()
            .describe('What came back; null when no answer came (timeout, refused connection).'),
        }),
      )
      .describe('Every try, oldest first, with its request and answer.'),
  }),
  stats: z.object({
    from: dateTime
      .describe(
        'ISO 8601 with an offset: the first bucket is the one holding it; default a day before `to`; after `to` is 400.',
      )
      .optional(),
    to: dateTime.describe('ISO 8601 with an offset: the last bucket is the one holding it; default now.').optional(),
    bucket: z
      .enum(STATS_BUCKETS)
      .describe(
        `UTC hours (default, at most ${STATS_MAX_BUCKETS.hour} buckets) or days (at most ${STATS_MAX_BUCKETS.day}); more is 400.`,
      )
      .optional(),
  }),
  statsAnswer: z.object({
    bucket: z.enum(STATS_BUCKETS),
    items: z
      .array(
        z.object({
          start: z.iso.datetime().describe("The bucket's start (ISO 8601, UTC)."),
          attempts: count(),
          succeeded: count().describe('Attempts answered 2xx.'),
          failed: count().describe('The other attempts: any other status, or no answer.'),
          p50Ms: count().nullable().describe('The median attempt duration; null when the bucket has no attempt.'),
          p99Ms: count()
            .nullable()
            .describe('The 99th percentile of the attempt durations; null when the bucket has no attempt.'),
        }),
      )
      .describe(
        'Every bucket from the one holding `from` to the one holding `to`, oldest first, empty ones with zeros.',
      ),
  }),
  redeliver: z.strictObject({
    id: lookupReference().meta({
      description: "The delivery's id, from GET /v3/webhook-deliveries.",
      examples: ['7c9e6679-7425-40de-944b-e07fc1f90ae7'],
    }),
  }),
  redeliverAnswer: z.object({ id: z.string(), status: z.literal('pending') }),
  redeliverFailed: z.strictObject({
    since: dateTime.describe('ISO 8601 with an offset: failed deliveries created at or after it are sent again.'),
  }),
  redeliverFailedAnswer: z.object({ count: count().describe('How many failed deliveries are pending again.') }),
};

export const webhookDeliveryRoutes = {
  list: {
    meta: {
      unit: 'replica',
      roles: ['brand', 'partner'],
      openapi: {
        method: 'GET',
        path: '/v3/webhook-deliveries',
        tags: ['webhooks'],
        summary: 'Your delivery log, newest first',
        description:
          'Every delivery to your endpoint with every try: when, what your endpoint answered, how long it took.',
        successDescription: 'A page of deliveries.',
      },
      rest: { problems: [400, 403, 404] },
    },
    input: webhookDeliveries.deliveries,
    output: webhookDeliveries.deliveriesAnswer,
  },
  stats: {
    meta: {
      unit: 'replica',
      roles: ['brand', 'partner'],
      openapi: {
        method: 'GET',
        path: '/v3/webhook-deliveries/stats',
        tags: ['webhooks'],
        summary: "Your endpoint's attempts per hour or day",
        description:
          'How your endpoint answered over time: its attempts per UTC hour or day, those answered 2xx and the ' +
          "others, and their durations' median and 99th percentile. Every bucket of the span is listed, empty ones " +
          'with zeros.',
        successDescription: 'The buckets, oldest first.',
      },
      rest: { problems: [400, 403, 404] },
    },
    input: webhookDeliveries.stats,
    output: webhookDeliveries.statsAnswer,
  },
  get: {
    meta: {
      unit: 'replica',
      roles: ['brand', 'partner'],
      openapi: {
        method: 'GET',
        path: '/v3/webhook-deliveries/{id}',
        tags: ['webhooks'],
        summary: 'One delivery: what was sent and answered',
        description:
          "The delivery as listed, with the exact payload sent and, on each try, the request's URL and headers " +
          "(signatures included) and the answer's headers and first 4096 bytes. Another endpoint's delivery is 404.",
        successDescription: 'The delivery in full.',
      },
      rest: { problems: [400, 403, 404] },
    },
    input: webhookDeliveries.delivery,
    output: webhookDeliveries.deliveryAnswer,
  },
  redeliver: {
    meta: {
      roles: ['brand', 'partner'],
      openapi: {
        method: 'POST',
        path: '/v3/webhook-deliveries/{id}/redeliver',
        tags: ['webhooks'],
        summary: 'Send one delivery again',
        description:
          'The same event (same `webhook-id`) is sent again at once; its tries continue in the log. A delivery being ' +
          'sent right now is left to finish. Deliveries of one order still go out in their order.',
        successDescription: 'Pending again.',
      },
      rest: { status: 202, problems: [403, 404] },
    },
    input: webhookDeliveries.redeliver,
    output: webhookDeliveries.redeliverAnswer,
  },
  redeliverFailed: {
    meta: {
      roles: ['brand', 'partner'],
      openapi: {
        method: 'POST',
        path: '/v3/webhook-deliveries/redeliver-failed',
        tags: ['webhooks'],
        summary: 'Send every failed delivery since a time again',
        description:
          'After an outage of your endpoint: every delivery that failed (its retries used up) and was created at or ' +
          "after `since` is sent again, each order's in their order.",
        successDescription: 'How many are pending again.',
      },
      rest: { status: 202, problems: [403, 404] },
    },
    input: webhookDeliveries.redeliverFailed,
    output: webhookDeliveries.redeliverFailedAnswer,
  },
} satisfies Record<string, RouteContract>;
