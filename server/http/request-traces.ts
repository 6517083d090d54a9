import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import { writeInSpan } from '../logger.ts';

/**
 * What a request's span hands on (CONTRACT §13), set by trace-requests.ts when tracing is on: its `traceparent`, kept
 * with the command and the events the request writes, and the ids that its log lines carry.
 */
export interface RequestTrace {
  traceparent: string | null;
  logFields: { trace_id: string; span_id: string };
}

const traces = new WeakMap<IncomingMessage, RequestTrace>();

export const keepRequestTrace = (req: IncomingMessage, kept: RequestTrace) => void traces.set(req, kept);

/** The request's trace: undefined with tracing off. */
export const traceOfRequest = (req: IncomingMessage): RequestTrace | undefined => traces.get(req);

/** After pino-http: the request's lines (its logger's, and its children's) carry its span's ids, with tracing on. */
export function logInRequestSpan(req: Request, _res: Response, next: () => void) {
  const kept = traces.get(req);
  if (kept) writeInSpan(req.log, kept.logFields);
  next();
}
