import type { Request, Response } from 'express';
import { isUnavailable } from '../../domain/errors.ts';
import { bearerChallenge } from '../credentials.ts';
import { problemFor, tokenAccepted } from '../errors.ts';

// What the REST routes that call a procedure themselves share (the legacy listing's stream, the event feed's stored
// text): the query as the REST adapter would hand it over, and a refusal answered as the adapter would answer it.

/** The query as trpc-to-openapi hands it to procedures: a key given once is a string, a repeated key an array, an empty one absent. */
export function singleValues(req: Request) {
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of new URL(req.originalUrl, 'http://x').searchParams) {
    if (value === '') continue;
    const current = query[key];
    query[key] = current === undefined ? value : [...(Array.isArray(current) ? current : [current]), value];
  }
  return query;
}

/** A procedure's refusal as its problem answer: the status, Retry-After, the Bearer challenge; a 5xx logged as `failed`. */
export function answerProblem(req: Request, res: Response, error: unknown, failed: string) {
  const { status, body, retryAfter } = problemFor(error, String(req.id));
  if (status >= 500) req.log[isUnavailable(error) ? 'warn' : 'error']({ err: error }, failed);
  if (retryAfter) res.setHeader('retry-after', String(retryAfter));
  if (status === 401) res.setHeader('www-authenticate', bearerChallenge(req.headers.authorization, tokenAccepted(error)));
  res.status(status).type('application/problem+json').send(JSON.stringify(body));
}
