import { z } from 'zod';
import { DELIVERY_STATUSES } from '../../domain/delivery.ts';
import { OWN_DELIVERY_LIMIT } from '../../domain/use-cases/own-deliveries.ts';
import { deliveryCursor } from '../cursors.ts';
import { reference } from '../wire-text.ts';
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
  eventId: z.string().describe('The event\'s `_eid`, also the `webhook-id` header.'),
  eventType: z.string(),
  url: z.string().nullable().describe('The URL the last attempt went to (your endpoint\'s URL of the moment before any attempt).'),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.array(attempt).describe('Every try, oldest first.'),
  createdAt: z.string(),
  nextAttemptAt: z.string().nullable().describe('When a pending delivery is tried next; null otherwise.'),
});

/** The caller's delivery log and replay (CONTRACT §10), and one delivery in full (§11). */
export const webhookDeliveries = {
  deliveries: z.object({
    status: z.enum(DELIVERY_STATUSES).optional().describe('Only deliveries in this state.'),
    limit: boundedQueryInt(1, OWN_DELIVERY_LIMIT.max, `1…${OWN_DELIVERY_LIMIT.max}, default ${OWN_DELIVERY_LIMIT.default}.`).optional(),
    before: deliveryCursor.optional(),
  }),
  deliveriesAnswer: z.object({
    items: z.array(listed),
    next: z.string().nullable().describe('Pass as `before` for older deliveries; null on the last page.'),
  }),
  delivery: z.object({ id: reference().meta({ description: 'The delivery\'s id, from GET /v3/webhook-deliveries.', examples: ['7c9e6679-7425-40de-944b-e07fc1f90ae7'] }) }),
  deliveryAnswer: listed.extend({
    payload: z.string().describe('The exact JSON text that was sent (and signed), as a string.'),
    attempts: z.array(attempt.extend({
      request: z.object({
        url: z.string(),
        headers: headers.describe('The headers sent, signature values included.'),
      }).nullable().describe('What was sent; null when nothing was (the endpoint was disabled or had no URL).'),
      response: z.object({
        headers,
        body: z.string().describe('The first 4096 bytes of the answer as UTF-8 text; "" when it had none.'),
      }).nullable().describe('What came back; null when no answer came (timeout, refused connection).'),
    })).describe('Every try, oldest first, with its request and answer.'),
  }),
  redeliver: z.strictObject({ id: reference().meta({ description: 'The delivery\'s id, from GET /v3/webhook-deliveries.', examples: ['7c9e6679-7425-40de-944b-e07fc1f90ae7'] }) }),
  redeliverAnswer: z.object({ id: z.string(), status: z.literal('pending') }),
  redeliverFailed: z.strictObject({ since: dateTime.describe('ISO 8601 with an offset: failed deliveries created at or after it are sent again.') }),
  redeliverFailedAnswer: z.object({ count: count().describe('How many failed deliveries are pending again.') }),
};
