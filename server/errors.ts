import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { type TRPC_ERROR_CODE_KEY, TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { DomainError, type DomainErrorCode, type Issue } from '../domain/errors.ts';
import { InputIssues } from './http/trpc-to-openapi-workarounds.ts';

/** The one place where domain failures become transport failures. */
const TRPC_CODE: Record<DomainErrorCode, TRPC_ERROR_CODE_KEY> = {
  VALIDATION_FAILED: 'BAD_REQUEST',
  UNAUTHENTICATED: 'UNAUTHORIZED',
  REQUEST_UNAUTHENTICATED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  CONFLICT: 'CONFLICT',
  RATE_LIMITED: 'TOO_MANY_REQUESTS',
  FEATURE_DISABLED: 'NOT_FOUND',
  // tRPC has no 410: typed clients get NOT_FOUND; the REST face answers 410 GONE (http/trpc-to-openapi-workarounds.ts).
  GONE: 'NOT_FOUND',
  UNAVAILABLE: 'SERVICE_UNAVAILABLE',
};

/**
 * Whether a 401 refuses the request with a token that verified (a signature, a role): its challenge then names no
 * error, since `invalid_token` tells OAuth clients to get another token, which would be refused the same way.
 */
export const tokenAccepted = (error: unknown): boolean => {
  const cause = error instanceof TRPCError ? error.cause : error;
  return cause instanceof DomainError && cause.code === 'REQUEST_UNAUTHENTICATED';
};

interface ZodLikeIssue {
  path: PropertyKey[];
  message: string;
  code?: string;
  keys?: string[];
}
const isZodError = (e: unknown): e is Error & { issues: ZodLikeIssue[] } =>
  e instanceof Error &&
  e.name === 'ZodError' &&
  !(e instanceof InputIssues) &&
  Array.isArray((e as { issues?: unknown }).issues);

const dotted = (path: PropertyKey[]) => path.map(String).join('.');

/** The issue of a member the operation does not define, named by its own path. */
export const NOT_A_MEMBER = "is not a member of this operation's input";

/** Our issues for zod's: a member the operation does not define is named by its own path, one issue each. */
const issuesFromZod = (issues: ZodLikeIssue[]): Issue[] =>
  issues.flatMap((i) =>
    i.code === 'unrecognized_keys' && i.keys
      ? i.keys.map((key) => ({ path: dotted([...i.path, key]), message: NOT_A_MEMBER }))
      : [{ path: dotted(i.path), message: i.message }],
  );

export function validationError(issues: Issue[], message = 'The input is not valid.'): TRPCError {
  return new TRPCError({ code: 'BAD_REQUEST', message, cause: new InputIssues(issues) });
}

/** Normalises whatever a procedure failed with: domain errors mapped, schema issues reshaped, the rest untouched. */
export function translateError(error: TRPCError): TRPCError {
  const cause = error.cause;
  if (cause instanceof DomainError) {
    if (cause.code === 'VALIDATION_FAILED') return validationError([...cause.issues], cause.message);
    return new TRPCError({ code: TRPC_CODE[cause.code], message: cause.message, cause });
  }
  // Only the input's issues are the caller's: a failed output check stays the 500 it is.
  if (isZodError(cause) && error.code === 'BAD_REQUEST') {
    return validationError(issuesFromZod(cause.issues));
  }
  if (cause instanceof SyntaxError)
    return new TRPCError({ code: 'PARSE_ERROR', message: 'The body is not well-formed JSON.' });
  // Anything else thrown while reading the input is a fault of ours: its text must not reach the caller.
  if (
    cause instanceof Error &&
    !(cause instanceof InputIssues) &&
    !isZodError(cause) &&
    error.code !== 'INTERNAL_SERVER_ERROR'
  ) {
    return new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'unexpected error', cause });
  }
  return error;
}

const TITLES: Partial<Record<TRPC_ERROR_CODE_KEY, string>> = {
  BAD_REQUEST: 'Bad Request',
  PARSE_ERROR: 'Malformed JSON',
  UNAUTHORIZED: 'Unauthorized',
  FORBIDDEN: 'Forbidden',
  NOT_FOUND: 'Not Found',
  METHOD_NOT_SUPPORTED: 'Method Not Allowed',
  CONFLICT: 'Conflict',
  PAYLOAD_TOO_LARGE: 'Payload Too Large',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported Media Type',
  TOO_MANY_REQUESTS: 'Too Many Requests',
  INTERNAL_SERVER_ERROR: 'Internal Server Error',
  SERVICE_UNAVAILABLE: 'Service Unavailable',
};

export const GENERIC_INTERNAL_DETAIL =
  'An unexpected error occurred. It has been logged; quote the request id when reporting it.';

/** Every `code` a REST problem can carry (CONTRACT §3). */
export type ProblemCode = TRPC_ERROR_CODE_KEY | 'GONE';
export const problemCodes: ProblemCode[] = [...(Object.keys(TITLES) as TRPC_ERROR_CODE_KEY[]), 'GONE'];

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  /** A short summary: trpc-to-openapi sets it on the answers of procedures, so every problem has it. */
  message: string;
  issues?: Issue[];
  requestId?: string;
}

/**
 * RFC 9457 problem details, the one shape of every REST failure; `code` is the stable machine-readable member (CONTRACT
 * §3).
 */
export function problem(
  code: ProblemCode,
  status: number,
  detail: string,
  extra: { issues?: Issue[]; requestId?: string } = {},
): Problem {
  const text = code === 'INTERNAL_SERVER_ERROR' ? GENERIC_INTERNAL_DETAIL : detail;
  return {
    type: 'about:blank',
    title: code === 'GONE' ? 'Gone' : (TITLES[code] ?? code),
    status,
    detail: text,
    code,
    // What trpc-to-openapi writes into `message` on the answers of procedures, so that every problem says the same.
    message: extra.issues ? 'Input validation failed' : text,
    ...(extra.issues && { issues: extra.issues }),
    ...(extra.requestId && { requestId: extra.requestId }),
  };
}

/**
 * A /trpc failure answered outside any procedure (the body's checks, a process still starting), in the shape tRPC's own
 * failures have, so that typed clients read it as theirs; with the request id, as every failure of that face has.
 */
export function trpcFailure(
  procedure: string,
  status: number,
  code: TRPC_ERROR_CODE_KEY,
  message: string,
  extra: { issues?: Issue[]; requestId: string },
) {
  const detail = status >= 500 && code === 'INTERNAL_SERVER_ERROR' ? GENERIC_INTERNAL_DETAIL : message;
  return {
    error: {
      message: detail,
      code: TRPC_ERROR_CODES_BY_KEY[code],
      data: {
        code,
        httpStatus: status,
        path: procedure,
        ...(extra.issues && { issues: extra.issues }),
        requestId: extra.requestId,
      },
    },
  };
}

export const issuesOf = (error: TRPCError) => (error.cause instanceof InputIssues ? error.cause.issues : undefined);
export const retryAfterOf = (error: TRPCError) =>
  error.cause instanceof DomainError ? error.cause.retryAfterSeconds : undefined;

/** The HTTP status of each code a domain failure maps to, as tRPC gives it. */
const STATUS_OF = new Map(
  Object.values(TRPC_CODE).map((code) => [code, getHTTPStatusCodeFromError(new TRPCError({ code }))]),
);

/** The problem answer for any failure outside a procedure (routes that stream), mapped as procedures map it. */
export function problemFor(error: unknown, requestId: string): { status: number; body: Problem; retryAfter?: number } {
  // A domain failure without issues maps directly (no TRPCError built twice over): the early fair-use refusal answers
  // thousands a second for a tenant hammering the service.
  if (error instanceof DomainError && error.code !== 'VALIDATION_FAILED') {
    const code = TRPC_CODE[error.code];
    const status = STATUS_OF.get(code)!;
    return { status, body: problem(code, status, error.message, { requestId }), retryAfter: error.retryAfterSeconds };
  }
  const wrapped =
    error instanceof TRPCError
      ? error
      : new TRPCError({ code: isZodError(error) ? 'BAD_REQUEST' : 'INTERNAL_SERVER_ERROR', cause: error as Error });
  const translated = translateError(wrapped);
  const status = getHTTPStatusCodeFromError(translated);
  return {
    status,
    body: problem(translated.code, status, translated.message, { issues: issuesOf(translated), requestId }),
    retryAfter: retryAfterOf(translated),
  };
}
