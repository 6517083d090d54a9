import { TRPCError } from '@trpc/server';
import type { Request, Response } from 'express';
import { isUnavailable } from '../../domain/errors.ts';
import { problem, problemFor, tokenAccepted } from '../errors.ts';
import { bearerChallenge } from '../pipeline/credentials.ts';
import { isGone } from './trpc-to-openapi-workarounds.ts';

// What the REST routes that call a procedure themselves share (the legacy listing's stream, the event feed's stored
// text): the query as the REST adapter would hand it over, and a refusal answered as the adapter would answer it.

/**
 * The query as trpc-to-openapi hands it to procedures: a key given once is a string, a repeated key an array, an empty
 * one absent.
 */
export function singleValues(req: Request) {
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of new URL(req.originalUrl, 'http://x').searchParams) {
    if (value === '') continue;
    const current = query[key];
    query[key] = current === undefined ? value : [...(Array.isArray(current) ? current : [current]), value];
  }
  return query;
}

/**
 * A procedure's refusal as the REST face answers it: its problem (a GONE one 410, which tRPC's codes do not have), the
 * status, Retry-After, the Bearer challenge; a 5xx logged as `failed`.
 */
export function answerProblem(req: Request, res: Response, error: unknown, failed: string) {
  const { status, body, retryAfter } =
    error instanceof TRPCError && isGone(error)
      ? { status: 410, body: problem('GONE', 410, error.message, { requestId: String(req.id) }), retryAfter: undefined }
      : problemFor(error, String(req.id));
  if (status >= 500) req.log[isUnavailable(error) ? 'warn' : 'error']({ err: error }, failed);
  if (retryAfter) res.setHeader('retry-after', String(retryAfter));
  if (status === 401) {
    res.setHeader('www-authenticate', bearerChallenge(req.headers.authorization, tokenAccepted(error)));
  }
  res.status(status).type('application/problem+json').send(JSON.stringify(body));
}
