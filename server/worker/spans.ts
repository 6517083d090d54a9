import {
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

const tracer = trace.getTracer('partner-brand-integration-api');

/**
 * Runs work in a span of the trace kept with what it continues (a command's or an event's `traceparent`, CONTRACT
 * §13): a worker's work joins the trace of the request that caused it, whichever process that request came to. A
 * failure marks the span; `settle` says what the work's answer tells of it. With tracing off, the work runs as it is.
 */
export function inStoredTrace<T>(
  traceparent: string | null | undefined,
  name: string,
  kind: SpanKind,
  work: () => Promise<T>,
  settle: (span: Span, answer: T) => void = () => {},
): Promise<T> {
  const parent = traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
  const span = tracer.startSpan(name, { kind }, parent);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      const answer = await work();
      settle(span, answer);
      return answer;
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}
