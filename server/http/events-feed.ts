import type { RequestHandler } from 'express';
import { contextFactory } from '../context.ts';
import { feedTextRouter } from '../routers/events.ts';
import type { Services } from '../services.ts';
import { answerProblem, singleValues } from './caller-route.ts';

/**
 * `{"items":[<event>,…],"next":…}` as UTF-8 bytes, each event encoded on its own straight into the page's one buffer:
 * joining the texts into one string of the page (433 KB at 500 events) and encoding that took several times the CPU,
 * and encoding each into a buffer of its own, then copying them together, half again (docs/BENCHMARKS.md, the event
 * feed).
 */
export function pageBytes(items: readonly string[], next: unknown): Buffer {
  const tail = `],"next":${JSON.stringify(next)}}`;
  let size = ITEMS_OPEN.length + Buffer.byteLength(tail) + Math.max(items.length - 1, 0);
  for (const item of items) size += Buffer.byteLength(item);
  const page = Buffer.allocUnsafe(size);
  let at = page.write(ITEMS_OPEN);
  for (const [i, item] of items.entries()) {
    if (i > 0) page[at++] = COMMA;
    at += page.write(item, at);
  }
  page.write(tail, at);
  return page;
}
const ITEMS_OPEN = '{"items":[';
const COMMA = 0x2c;

/**
 * GET /v3/events for REST callers: the documented procedure's guard, input and errors (feedTextRouter), and the page
 * written from each event's stored JSON text as it is, byte for byte what the procedure would answer, without parsing
 * and writing every event again.
 */
export function eventsFeedRoute(services: Services): RequestHandler {
  const context = contextFactory(services, 'rest');
  return async (req, res) => {
    try {
      const { items, next } = await feedTextRouter.createCaller(context({ req })).page(singleValues(req) as never);
      res.status(200).type('application/json').send(pageBytes(items, next));
    } catch (error) {
      answerProblem(req, res, error, 'event feed failed');
    }
  };
}
