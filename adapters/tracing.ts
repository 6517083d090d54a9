import { hostname } from 'node:os';
import { context, propagation, trace } from '@opentelemetry/api';

/** The process's tracing once started: flushes what is left at the end. */
export interface Tracing {
  shutdown(): Promise<void>;
}

const DEFAULT_SERVICE_NAME = 'partner-brand-integration-api';

/**
 * Starts exporting traces over OTLP/HTTP as OpenTelemetry's settings say (endpoint, `OTEL_EXPORTER_OTLP_PROTOCOL`
 * `http/protobuf` or `http/json`, `OTEL_SERVICE_NAME`, `OTEL_BSP_SCHEDULE_DELAY`), with W3C trace context and
 * a context kept across awaits (AsyncLocalStorage). The SDK is loaded only here: with no endpoint set nothing of it
 * loads, and the API's calls elsewhere stay no-ops.
 */
export async function startTracing(env: NodeJS.ProcessEnv): Promise<Tracing> {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  const [{ TracerProvider, BatchSpanProcessor }, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
    ]);
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const { OTLPTraceExporter } =
    protocol === 'http/json'
      ? await import('@opentelemetry/exporter-trace-otlp-http')
      : await import('@opentelemetry/exporter-trace-otlp-proto');
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': env.OTEL_SERVICE_NAME || DEFAULT_SERVICE_NAME,
      // Which process of a deployment: a trace crosses several (an API process, then a worker).
      'service.instance.id': `${env.SERVICE_ROLE || 'all'}-${hostname()}-${process.pid}`,
    }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter(),
        // The SDK's processor no longer reads its own setting: OTEL_BSP_SCHEDULE_DELAY (ms, 5000 by default).
        ...(Number(env.OTEL_BSP_SCHEDULE_DELAY) > 0 && { scheduledDelayMillis: Number(env.OTEL_BSP_SCHEDULE_DELAY) }),
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return { shutdown: () => provider.shutdown() };
}

/** The active trace context as W3C headers (`traceparent`, `tracestate`): none with tracing off or no span active. */
export function traceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** The active context's `traceparent`, kept with what this work causes later elsewhere (a command, an event). */
export const currentTraceparent = (): string | null => traceHeaders().traceparent ?? null;

/** What a log line written inside a span carries: its trace and span ids (nothing outside one). */
export function traceIdsOfLogLine(): Record<string, string> {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
