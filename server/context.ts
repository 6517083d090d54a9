import type { IncomingMessage } from 'node:http';
import type { CurrentTrace } from '../domain/trace.ts';
import { traceOfRequest } from './http/request-traces.ts';
import type { Logger } from './logger.ts';
import type { BodyProblem } from './pipeline/json-body.ts';
import type { Services, UnitOfWork } from './services.ts';

export type Transport = 'rest' | 'trpc';

export interface Context {
  /** Which face answers: REST errors are problem+json, /trpc keeps tRPC's own shape. */
  transport: Transport;
  requestId: string;
  log: Logger;
  services: Services;
  /**
   * The request's one unit of work: authentication, the signature check and the use case share it (over /trpc, each
   * call of a batch takes one of its own: server/pipeline/procedures.ts). It forks, and begins, only when first used.
   */
  unit: UnitOfWork;
  /** The request's trace context, for the units of its work (CONTRACT §13); undefined with tracing off. */
  trace: CurrentTrace | undefined;
  authorization: string | undefined;
  /** The exact request bytes, for signatures (REST, and partner commands over /trpc). */
  rawBody: Buffer | undefined;
  /**
   * A body no operation can take (malformed, too deep, not an object); raised once token and signature have been
   * checked.
   */
  bodyProblem: BodyProblem | null;
  /** `x-webhook-signature` of partner commands. */
  signature: string | undefined;
  clientAddress: string;
}

type RequestWithExtras = IncomingMessage & {
  id?: unknown;
  log?: Logger;
  rawBody?: Buffer;
  ip?: string;
  bodyProblem?: BodyProblem;
};

export const contextFactory =
  (services: Services, transport: Transport) =>
  ({ req }: { req: IncomingMessage }): Context => {
    const r = req as RequestWithExtras;
    const kept = traceOfRequest(req);
    const trace: CurrentTrace | undefined = kept && (() => kept.traceparent);
    return {
      transport,
      requestId: String(r.id ?? ''),
      log: r.log ?? services.log,
      services,
      unit: services.unitOfWork(trace),
      trace,
      authorization: req.headers.authorization,
      rawBody: r.rawBody,
      bodyProblem: r.bodyProblem ?? null,
      signature:
        typeof req.headers['x-webhook-signature'] === 'string' ? req.headers['x-webhook-signature'] : undefined,
      clientAddress: r.ip ?? req.socket.remoteAddress ?? 'unknown',
    };
  };
