import type { IncomingMessage, RequestListener } from 'node:http';
import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { traceparentOf } from '../traceparent.ts';
import { keepRequestTrace } from './request-traces.ts';

/** The route a request was answered under, read once it is answered; undefined where none is known yet. */
export type RouteOfRequest = (req: IncomingMessage) => string | undefined;

/**
 * A server span for each request `listener` answers (CONTRACT §13), installed only when tracing is on, around the
 * outermost listener: so that an answer given before express (the fair-use door's 429, the 503s while the process
 * starts) has one too. Named `<METHOD> <route>`, the route read once answered; only `<METHOD>` while none is known
 * (the code that knows the routes is still loading). A valid incoming `traceparent` is its parent. It holds the
 * method, the route and the status, nothing of the request's content. Its context is handed on with the request
 * (request-traces.ts), not kept across awaits (adapters/tracing.ts says why).
 */
export function traceRequests(listener: RequestListener, routeOfRequest: RouteOfRequest = () => undefined) {
  const tracer = trace.getTracer('partner-brand-integration-api');
  const traced: RequestListener = (req, res) => {
    const method = req.method ?? '';
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
      parent,
    );
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const route = routeOfRequest(req);
      if (route !== undefined) span.updateName(`${method} ${route}`);
      // A path that matched no route has none (never the raw path, which could carry anything).
      if (route !== undefined && route !== 'unmatched') span.setAttribute('http.route', route);
      if (!res.headersSent) {
        // Closed by the caller before any answer: no status to tell.
        span.setAttribute('error.type', 'aborted');
        span.setStatus({ code: SpanStatusCode.ERROR });
      } else {
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    const { traceId, spanId } = span.spanContext();
    keepRequestTrace(req, { traceparent: traceparentOf(span), logFields: { trace_id: traceId, span_id: spanId } });
    listener(req, res);
  };
  return traced;
}
