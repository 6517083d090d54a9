import { DomainError, isUnavailable } from '../../domain/errors.ts';

// SQLSTATE classes and codes that say the server cannot serve now, not that the statement was wrong: 08 connection
// exceptions (but 08P01, a protocol violation: what was sent was wrong, and sending it again fails again), 40001 and
// 40P01 a transaction the server rolled back (a serialization failure, a deadlock: the same work sent again succeeds;
// not the rest of class 40, such as 40003, where whether it committed is unknown), 53 insufficient resources (too many
// connections, disk full), 57014 a statement past its timeout, 57P0x the server shutting down, crashed or still
// starting.
const UNAVAILABLE_SQLSTATE = /^(08(?!P01)|53)|^(40001|40P01|57014|57P0[1-3])$/;
const UNREACHABLE_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// What pg and knex say without a code: a connection lost, a connect timeout (pg.Client's is "timeout expired", the
// pool's "timeout exceeded…"), no pooled connection in time.
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connection error and is not queryable|^timeout expired$|timeout exceeded when trying to connect|Timeout acquiring a connection/i;

/** Whether an error (or any error it was caused by) says the database cannot be reached or cannot answer now. */
function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, sqlState } = e as { code?: unknown; sqlState?: unknown };
    const state = typeof sqlState === 'string' ? sqlState : typeof code === 'string' ? code : '';
    if (UNAVAILABLE_SQLSTATE.test(state) || UNREACHABLE_ERRNO.has(state)) return true;
    if (e.name === 'KnexTimeoutError' || UNAVAILABLE_MESSAGE.test(e.message)) return true;
  }
  return false;
}

/** Seconds a caller is told to wait before sending again while the database is away. */
const RETRY_AFTER_SECONDS = 5;

/** The failure the core reports for a database that cannot answer: the same request may be sent again later. */
export const databaseUnavailable = (cause: unknown) =>
  new DomainError(
    'UNAVAILABLE',
    'The service cannot reach its database right now; send the same request again shortly.',
    [],
    RETRY_AFTER_SECONDS,
    cause,
  );

/** The core's failure for an error that says the database cannot answer now; any other error as it is. */
export const unavailableOr = (error: unknown) =>
  !isUnavailable(error) && isDatabaseUnavailable(error) ? databaseUnavailable(error) : error;
