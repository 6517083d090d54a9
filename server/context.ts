import type { IncomingMessage } from 'node:http';
import type { Logger } from './logger.ts';
import type { Services } from './services.ts';

export type Transport = 'rest' | 'trpc';

export interface Context {
  /** Which face answers: REST errors are problem+json, /trpc keeps tRPC's own shape. */
  transport: Transport;
  requestId: string;
  log: Logger;
  services: Services;
  authorization: string | undefined;
  /** The exact request bytes, for signatures (REST, and partner commands over /trpc). */
  rawBody: Buffer | undefined;
  /** The body was not well-formed JSON; raised once token and signature have been checked. */
  bodyUnreadable: boolean;
  /** `x-webhook-signature` of partner commands. */
  signature: string | undefined;
  clientAddress: string;
}

type RequestWithExtras = IncomingMessage & { id?: unknown; log?: Logger; rawBody?: Buffer; ip?: string; bodyUnreadable?: boolean };

export const contextFactory = (services: Services, transport: Transport) =>
  ({ req }: { req: IncomingMessage }): Context => {
    const r = req as RequestWithExtras;
    return {
      transport,
      requestId: String(r.id ?? ''),
      log: r.log ?? services.log,
      services,
      authorization: req.headers.authorization,
      rawBody: r.rawBody,
      bodyUnreadable: r.bodyUnreadable === true,
      signature: typeof req.headers['x-webhook-signature'] === 'string' ? req.headers['x-webhook-signature'] : undefined,
      clientAddress: r.ip ?? req.socket.remoteAddress ?? 'unknown',
    };
  };
