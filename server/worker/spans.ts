import { propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { DeliveryResult } from '../../domain/delivery.ts';
import type { CurrentTrace } from '../../domain/trace.ts';
import { traceparentOf } from '../traceparent.ts';

const tracer = trace.getTracer('partner-brand-integration-api');

/**
 * Runs work in a span of the trace kept with what it continues (a command's or an event's `traceparent`, CONTRACT
 * §13): a worker's work joins the trace of the request that caused it, whichever process that request came to. The
 * work is handed its span's own `traceparent`, for what it causes in turn (null with tracing off). A failure marks
 * the span; `settle` says what the work's answer tells of it.
 */
export async function inStoredTrace<T>(
  traceparent: string | null | undefined,
  name: string,
  kind: SpanKind,
  work: (traceparent: string | null) => Promise<T>,
  settle: (span: Span, answer: T) => void = () => {},
): Promise<T> {
  const parent = traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
  const span = tracer.startSpan(name, { kind }, parent);
  try {
    const answer = await work(traceparentOf(span));
    settle(span, answer);
    return answer;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * The trace of a lane's work: the lane runs one command at a time, each in a span of its own (kind consumer), and what
 * the command writes meanwhile continues that span. `current` is what the lane's units of work read as they write.
 */
export function laneTrace() {
  let running: string | null = null;
  const current: CurrentTrace = () => running;
  return {
    current,
    around<T>(
      stored: string | null | undefined,
      name: string,
      work: () => Promise<T>,
      settle: (span: Span, answer: T) => void,
    ) {
      return inStoredTrace(
        stored,
        name,
        SpanKind.CONSUMER,
        async (traceparent) => {
          running = traceparent;
          try {
            return await work();
          } finally {
            running = null;
          }
        },
        settle,
      );
    },
  };
}

/**
 * An attempt's span (CONTRACT §13): its answer's status, or an error when none came or it was not a success. Nothing of
 * the request: not its URL, which is the integrator's.
 */
export const settleAttempt = (span: Span, { attempt, exchange }: DeliveryResult) => {
  if (exchange) span.setAttribute('http.request.method', 'POST');
  if (attempt.statusCode !== null) span.setAttribute('http.response.status_code', attempt.statusCode);
  if (attempt.statusCode === null || attempt.statusCode < 200 || attempt.statusCode > 299)
    span.setStatus({ code: SpanStatusCode.ERROR });
};
