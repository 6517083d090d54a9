import type { RequestHandler } from 'express';
import { contextFactory } from '../context.ts';
import { feedTextRouter } from '../routers/events.ts';
import type { Services } from '../services.ts';
import { answerProblem, singleValues } from './caller-route.ts';

/**
 * GET /v3/events for REST callers: the documented procedure's guard, input and errors (feedTextRouter), and the page
 * written from each event's stored JSON text as it is: `{"items":[<event>,…],"next":…}`, byte for byte what the
 * procedure would answer, without parsing and writing every event again.
 */
export function eventsFeedRoute(services: Services): RequestHandler {
  const context = contextFactory(services, 'rest');
  return async (req, res) => {
    try {
      const { items, next } = await feedTextRouter.createCaller(context({ req })).page(singleValues(req) as never);
      res
        .status(200)
        .type('application/json')
        .send(`{"items":[${items.join(',')}],"next":${JSON.stringify(next)}}`);
    } catch (error) {
      answerProblem(req, res, error, 'event feed failed');
    }
  };
}
