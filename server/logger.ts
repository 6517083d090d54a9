import { type DestinationStream, type Logger, pino } from 'pino';
import { prettyFactory } from 'pino-pretty';

import { isUnavailable } from '../domain/errors.ts';

export type { Logger };

const FLUSH_EVERY_MS = 1000;

/**
 * JSON lines on stdout, or lines for people (`pretty`). Secrets never reach a line: headers that carry them are
 * censored at the source. Lines are buffered and written in blocks (a write per line would cost a system call per
 * request under load), but never held longer than a second, and whatever is left goes out when the process exits,
 * however it exits.
 */
export function createLogger(
  level: string,
  format: 'pretty' | 'json' = 'json',
  colors = false,
  { traced = false } = {},
): Logger {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), FLUSH_EVERY_MS).unref();
  process.once('exit', () => destination.flushSync());
  return pino(
    {
      level,
      serializers: { err: safeError },
      ...(traced && { mixin: idsOfSpan }),
      base: { service: 'partner-brand-api' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'req.headers["x-webhook-signature"]',
          '*.password',
          '*.token',
          '*.signatureKey',
          '*.access_token',
          '*.refreshToken',
        ],
        censor: '[redacted]',
      },
    },
    format === 'pretty' ? prettyLines(destination, colors) : destination,
  );
}

const IN_SPAN = Symbol('the ids of the span a logger writes in');
type SpanIds = { trace_id: string; span_id: string };

/**
 * From now on the lines of `log`, and of the loggers made from it after, carry the ids of a span (CONTRACT §13): a
 * request's logger, in the request's span. Only a logger made `traced` writes them. Set on the logger rather than
 * bound as a child's fields: a child per request cost more than the span itself.
 */
export function writeInSpan(log: Logger, ids: SpanIds): void {
  Object.assign(log, { [IN_SPAN]: ids });
}

/** A new object each line: pino merges the line's own fields into what this answers. */
const idsOfSpan = (_fields: object, _level: number, logger: Logger): Partial<SpanIds> => {
  const ids = (logger as Logger & { [IN_SPAN]?: SpanIds })[IN_SPAN];
  return ids ? { trace_id: ids.trace_id, span_id: ids.span_id } : {};
};

/**
 * Each JSON line made readable in this thread, as it is logged, into the same buffered destination: a pino-pretty
 * stream or transport would hand lines to another stream or thread, and the last line before an exit could be lost.
 */
function prettyLines(destination: ReturnType<typeof pino.destination>, colors: boolean): DestinationStream {
  const pretty = prettyFactory({
    colorize: colors,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'service',
    singleLine: true,
  });
  return {
    write: (line: string) => destination.write(pretty(line)),
    // What the logger's flush and the exit's last lines call on its stream.
    flush: (callback?: (err?: Error) => void) => destination.flush(callback),
    flushSync: () => destination.flushSync(),
  } as DestinationStream;
}

/**
 * Database errors carry the statement, and the ORM inlines parameter values into it (a signature key, a command
 * body): log their kind and SQLSTATE, never their text.
 */
export function safeError(err: unknown, depth = 0): unknown {
  const serialized = pino.stdSerializers.err(err as Error);
  const e = err as { name?: string; message?: string; stack?: string; code?: unknown; cause?: unknown };
  const sqlState = sqlStateOf(err);
  if (sqlState !== null)
    return {
      type: serialized.type,
      sqlState,
      message: `${e.name ?? 'DatabaseError'} (SQLSTATE ${sqlState}); statement and values withheld`,
    };
  if (!(err instanceof Error)) {
    return typeof err === 'object' && err !== null
      ? {
          type: 'thrown value',
          message: typeof e.message === 'string' ? e.message : 'a value that is not an Error was thrown',
        }
      : { type: 'thrown value', message: String(err) };
  }
  // Only the fields named here: an error's other properties are whatever its thrower kept (a URL's `input` with its
  // password, a request's body). pino would append each cause's text to the message: each cause is serialized on its
  // own, by the same rule.
  const cause =
    e.cause === undefined
      ? undefined
      : depth >= 4
        ? { type: 'Error', message: 'deeper causes withheld' }
        : safeError(e.cause, depth + 1);
  return {
    type: serialized.type,
    message: e.message,
    stack: e.stack,
    ...((typeof e.code === 'string' || typeof e.code === 'number') && { code: e.code }),
    ...(cause !== undefined && { cause }),
  };
}

/** The SQLSTATE of a database error (pg's `code` beside its `severity`, or the ORM's `sqlState`), else null. */
function sqlStateOf(err: unknown): string | null {
  const e = (err ?? {}) as { sqlState?: unknown; code?: unknown; severity?: unknown };
  return typeof e.sqlState === 'string'
    ? e.sqlState
    : typeof e.severity === 'string' && typeof e.code === 'string'
      ? e.code
      : null;
}

/** A transaction the server rolled back to break a deadlock (40P01) or a serialization conflict (40001). */
const UNDONE_BY_THE_SERVER = new Set(['40001', '40P01']);

/**
 * The level of a background failure: the database away is an operational state (readiness and 503s show it), and so is
 * a transaction the server rolled back to break a deadlock or a serialization conflict, which the work is tried again
 * for: warnings. Anything else is a fault, an error.
 */
export const failureLevel = (err: unknown): 'warn' | 'error' =>
  isUnavailable(err) || UNDONE_BY_THE_SERVER.has(sqlStateOf(err) ?? '') ? 'warn' : 'error';
