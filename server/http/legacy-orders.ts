import type { Request, RequestHandler, Response } from 'express';
import { contextFactory } from '../context.ts';
import { legacyStreamRouter } from '../routers/partner-orders.ts';
import type { Services } from '../services.ts';
import { answerProblem, singleValues } from './caller-route.ts';

/**
 * GET /v3/partner-orders streamed: `[`, then each batch of rendered orders as the repository's keyset reads
 * yield it (each a short statement; no connection held between them), then `]`, honouring backpressure, so
 * that memory stays flat however large the scope. It calls the
 * listing's procedure (same guard, input and errors as the documented one), whose answer is the batches;
 * every refusal comes before the first byte, while it can still be a proper problem answer.
 */
export function legacyOrdersRoute(services: Services): RequestHandler {
  const context = contextFactory(services, 'rest');
  return async (req, res) => {
    let batches: AsyncIterable<Record<string, unknown>[]>;
    try {
      batches = await legacyStreamRouter.createCaller(context({ req })).stream(singleValues(req) as never);
    } catch (error) {
      answerProblem(req, res, error, 'legacy listing failed');
      return;
    }
    await streamBatches(req, res, batches, services.config.listingStallTimeoutMs);
  };
}

/**
 * Writes the batches as one JSON array. The status goes out with the first bytes, so that a failure before them
 * (the first read, which opens the cursor) is still a proper problem answer; after them, the answer is cut short.
 */
export async function streamBatches(
  req: Request,
  res: Response,
  batches: AsyncIterable<Record<string, unknown>[]>,
  stallTimeoutMs: number,
) {
  res.status(200).type('application/json');
  // `[` goes out with the first rows, so that the first byte means data (or the end of an empty list).
  let first = true;
  try {
    for await (const batch of batches) {
      if (res.destroyed) break; // the client left: stop reading, which closes the cursor
      if (batch.length === 0) continue;
      let chunk = first ? '[' : '';
      for (const item of batch) {
        chunk += (first ? '' : ',') + JSON.stringify(item);
        first = false;
      }
      // Let go of the batch once its text is built. What carried it here (the iteration's promises) was made before its
      // statement went out and aged by V8's scavenge while the process waited for the answer: promoted, and dead but
      // kept until a mark-compact, it would keep the batch alive through the next scavenge and into the old generation
      // (RSS grew with the scope: 326 MB peak for 60k orders, against a flat ~190 MB).
      batch.length = 0;
      if (!res.write(chunk) && !(await drained(res, stallTimeoutMs))) {
        req.log.warn(
          { stallTimeoutMs },
          'legacy listing: the client stopped reading; connection dropped (LISTING_STALL_TIMEOUT_MS)',
        );
        res.destroy();
        break;
      }
    }
    res.end(first ? '[]' : ']');
  } catch (err) {
    if (!res.headersSent) {
      answerProblem(req, res, err, 'legacy listing failed');
      return;
    }
    // Too late for a status: cut the answer short, so that the client sees invalid JSON rather than a partial list.
    req.log.error({ err }, 'legacy listing failed while streaming');
    res.destroy();
  }
}

/**
 * Resolves true once the client has taken the buffered data, false if it left or stalled for `timeoutMs`
 * (LISTING_STALL_TIMEOUT_MS): a stream holds no database connection while it waits, but its slot and a batch.
 */
function drained(res: Response, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => finish(true);
    const onClose = () => finish(false);
    const timer = setTimeout(() => finish(false), timeoutMs);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}
