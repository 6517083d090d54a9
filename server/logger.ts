import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * JSON lines on stdout. Secrets never reach a line: headers that carry them are censored at the source.
 * Lines are buffered and written in blocks (a write per line would cost a system call per request); call
 * `flushSync()` before exiting.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'partner-brand-api' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers.authorization', 'req.headers.cookie', 'req.headers["x-webhook-signature"]',
        '*.password', '*.token', '*.signatureKey', '*.access_token', '*.refreshToken',
      ],
      censor: '[redacted]',
    },
  }, pino.destination({ dest: 1, sync: false, minLength: 4096 }));
}
