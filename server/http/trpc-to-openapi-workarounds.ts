import { TRPCError } from '@trpc/server';
import type { RequestHandler } from 'express';
import { DomainError, type Issue } from '../../domain/errors.ts';
import type { Context } from '../context.ts';
import type { ProblemCode } from '../errors.ts';
import type { Meta } from '../meta.ts';

// Where trpc-to-openapi (3.3) does not serve the REST face as CONTRACT says, it is worked around here, one piece each
// with why. Each piece has a test that fails without it; drop one when a version of the adapter does it itself.

/**
 * Path parameters: the adapter hands them over as they stand in the URL, still percent-encoded. Decoded here, on the
 * REST face only (a typed client sends them as they are), so that `/v3/commands/a%20b` names the `_cid` "a b" and
 * `%2A` is "*" (tests/http/partner-orders/scope-and-access).
 */
export function decodedPathParameters(ctx: Context, meta: Meta | undefined, getRawInput: () => Promise<unknown>) {
  const path = ctx.transport === 'rest' ? meta?.openapi?.path : undefined;
  const names = [...(path ?? '').matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  if (names.length === 0) return undefined;
  return async () => {
    const raw = await getRawInput();
    if (typeof raw !== 'object' || raw === null) return raw;
    const decoded: Record<string, unknown> = { ...raw };
    for (const name of names) {
      const value = decoded[name];
      if (typeof value !== 'string') continue;
      try {
        decoded[name] = decodeURIComponent(value);
      } catch {
        /* not a valid escape: the schema judges it as it is */
      }
    }
    return decoded;
  };
}

/**
 * Media types: the adapter takes a body only when its content-type starts with `application/json` as written, and
 * answers any other 415 in its own shape, before a context exists; media types are case-insensitive (RFC 9110), so
 * `Application/JSON` is written in lower case for it. The edge has already refused every other type
 * (server/pipeline/json-body.ts; tests/http/odd-input/body-framing).
 */
export const jsonMediaTypeInLowerCase: RequestHandler = (req, _res, next) => {
  const given = req.headers['content-type'];
  if (given !== undefined && !given.startsWith('application/json')) {
    const [type = '', ...parameters] = given.split(';');
    if (type.trim().toLowerCase() === 'application/json')
      req.headers['content-type'] = ['application/json', ...parameters].join(';');
  }
  next();
};

/** A failure that the REST face answers 410 `GONE` (CONTRACT §3), a status tRPC's codes do not have. */
export const isGone = (error: TRPCError) => error.cause instanceof DomainError && error.cause.code === 'GONE';

/**
 * GONE: the adapter writes the error's own `code` into the body, and tRPC knows no GONE. The REST face's error carries
 * it in place of NOT_FOUND (here, applied by server/pipeline/failures.ts); the error formatter (server/trpc.ts) and the
 * response meta (server/http/app.ts) give that code its 410 (tests/http/errors). The feed, today's one GONE, answers on
 * a route of its own that calls its procedure (server/http/caller-route.ts), with the same 410.
 */
export function restGone(error: TRPCError): TRPCError {
  const gone = new TRPCError({ code: 'NOT_FOUND', message: error.message, cause: error.cause });
  (gone as unknown as { code: ProblemCode }).code = 'GONE';
  return gone;
}

/**
 * Issues: the adapter copies `cause.issues` into the body only for a cause named ZodError, so the error that carries
 * our `{ path, message }` issues takes that name; its issues are already in our shape (tests/http/odd-input).
 */
export class InputIssues extends Error {
  override readonly name = 'ZodError';
  constructor(readonly issues: Issue[]) {
    super('Input validation failed');
  }
}
