import { z } from 'zod';
import type { DeliveryPosition } from '../domain/delivery.ts';
import type { FeedCursor } from '../domain/use-cases/read-event-feed.ts';
import { wireString } from './wire-text.ts';

// Opaque cursors: two numbers in base64url JSON. Opaque to integrators (the document says: pass `next` back as it is),
// readable to us: a cursor that does not decode is a 400, never a 500.
const MAX_DATE_MS = 8.64e15;
const encode = (pair: readonly [number, number]) => Buffer.from(JSON.stringify(pair)).toString('base64url');

function decode(value: string): [number, number] | null {
  try {
    const pair: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    // Both members stay within what a Date can hold (8.64e15 ms), so that neither can become an Invalid Date.
    return Array.isArray(pair) &&
      pair.length === 2 &&
      pair.every((n) => Number.isSafeInteger(n) && n >= 0 && n <= MAX_DATE_MS)
      ? [pair[0], pair[1]]
      : null;
  } catch {
    return null;
  }
}

const cursorOf = <T>(description: string, from: (pair: [number, number]) => T) =>
  wireString()
    .max(200)
    .transform((value, ctx) => {
      const pair = decode(value);
      if (!pair) {
        ctx.addIssue({
          code: 'custom',
          message: 'not a cursor of this API: pass back `next` exactly as it was answered',
        });
        return z.NEVER;
      }
      return from(pair);
    })
    .meta({ description, override: { type: 'string' } });

export const feedCursor = cursorOf<FeedCursor>(
  '`next` of the page before; absent: from the oldest retained event.',
  ([position, at]) => ({ position, createdAt: new Date(at) }),
);
export const encodeFeedCursor = (c: FeedCursor) => encode([c.position, c.createdAt.getTime()]);

export const deliveryCursor = cursorOf<DeliveryPosition>(
  '`next` of the page before; absent: the newest deliveries.',
  ([at, seq]) => ({ createdAt: new Date(at), seq }),
);
export const encodeDeliveryCursor = (p: DeliveryPosition) => encode([p.createdAt.getTime(), p.seq]);
