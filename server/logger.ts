import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON lines on stdout. Secrets never reach a line: headers that carry them are censored at the source. */
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
  });
}
