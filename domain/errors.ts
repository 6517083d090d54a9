/**
 * The closed set of failures the core can report. The edge (server/errors.ts) maps every code once;
 * an unmapped code fails to compile there.
 */
export type DomainErrorCode =
  | 'VALIDATION_FAILED'
  /** The bearer token is missing, unknown, expired or not one this call takes (a refresh token): get another. */
  | 'UNAUTHENTICATED'
  /**
   * The token is good, the request still is not authenticated: a signature missing or wrong, a token of another role.
   */
  | 'REQUEST_UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  /** Asked for something older than the retention window (an event feed cursor). */
  | 'GONE'
  | 'FEATURE_DISABLED'
  /** A store the core depends on cannot answer right now (the database is down or unreachable): try again later. */
  | 'UNAVAILABLE';

export interface Issue {
  /** Dotted path of the offending field, e.g. `customer.email`; empty for the whole input. */
  path: string;
  message: string;
}

export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly issues: readonly Issue[] = [],
    /** Seconds after which a rate-limited caller may try again. */
    readonly retryAfterSeconds?: number,
    /** What an adapter saw, for the operators' logs (never for the caller). */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
  }
}

export const invalid = (path: string, message: string) =>
  new DomainError('VALIDATION_FAILED', message, [{ path, message }]);
export const notFound = (what: string) => new DomainError('NOT_FOUND', `${what} was not found.`);
export const conflict = (message: string) => new DomainError('CONFLICT', message);

/**
 * Whether a failure says that a store cannot answer right now (the same work may succeed later), not that it is wrong.
 */
export const isUnavailable = (error: unknown) => error instanceof DomainError && error.code === 'UNAVAILABLE';
