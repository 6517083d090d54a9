import { propagation, ROOT_CONTEXT, type Span, trace } from '@opentelemetry/api';

/**
 * A span's context as W3C `traceparent` (CONTRACT §13), to hand on by hand to what it causes: kept with a command or an
 * event, sent with a webhook. Null with tracing off (no propagator is set, and nothing is traced).
 */
export function traceparentOf(span: Span): string | null {
  const carrier: { traceparent?: string } = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return carrier.traceparent ?? null;
}
