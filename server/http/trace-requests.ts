import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { routeOf } from '../metrics.ts';

/**
 * A server span for each request (CONTRACT §13), installed only when tracing is on: named `<METHOD> <route>` with the
 * route as the document writes it (`/v3/poll/job/{version}/{orderId}`), or the procedure for /trpc; a valid incoming
 * `traceparent` is its parent. It holds the method, the route and the status, nothing of the request's content.
 */
export function traceRequests(procedures: ReadonlySet<string>): RequestHandler {
  const tracer = trace.getTracer('partner-brand-integration-api');
  return (req, res, next) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(
      req.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } },
      parent,
    );
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const route = routeOf(req.route?.path, req.originalUrl, procedures)
        .replace(/:(\w+)/g, '{$1}')
        .replace(/^\/trpc\//, '');
      span.updateName(`${req.method} ${route}`);
      // A path that matched no route has none (never the raw path, which could carry anything).
      span.setAttributes({
        ...(route !== 'unmatched' && { 'http.route': route }),
        'http.response.status_code': res.statusCode,
      });
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    context.with(trace.setSpan(parent, span), next);
  };
}
