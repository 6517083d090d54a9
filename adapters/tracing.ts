import { hostname } from 'node:os';
import { context, DiagLogLevel, diag, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';

/** The process's tracing once started: says what goes wrong, and flushes what is left at the end. */
export interface Tracing {
  /** Exports that failed and spans dropped, to the process's log: a line a minute at most, with the count held back. */
  reportProblemsTo(warn: (fields: Record<string, unknown>, message: string) => void): void;
  shutdown(): Promise<void>;
}

const DEFAULT_SERVICE_NAME = 'partner-brand-integration-api';
const PROBLEM_LINE_EVERY_MS = 60_000;

/**
 * Starts exporting traces over OTLP/HTTP as OpenTelemetry's settings say (endpoint, `OTEL_EXPORTER_OTLP_PROTOCOL`
 * `http/protobuf` or `http/json`, `OTEL_SERVICE_NAME`, `OTEL_BSP_SCHEDULE_DELAY`), with W3C trace context and
 * a context kept across awaits (AsyncLocalStorage). The SDK is loaded only here: with no endpoint set nothing of it
 * loads, and the API's calls elsewhere stay no-ops.
 */
export async function startTracing(env: NodeJS.ProcessEnv): Promise<Tracing> {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  const [
    { TracerProvider, BatchSpanProcessor },
    { AsyncLocalStorageContextManager },
    { W3CTraceContextPropagator, setGlobalErrorHandler },
  ] = await Promise.all([
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
  return {
    reportProblemsTo(warn) {
      const report = throttled(warn);
      // A failed export reaches the SDK's error handler; spans dropped from a full queue, its diagnostic log.
      setGlobalErrorHandler((error) => report(error instanceof Error ? error.message : String(error)));
      diag.setLogger(
        { error: report, warn: report, info: () => {}, debug: () => {}, verbose: () => {} },
        { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
      );
    },
    shutdown: () => provider.shutdown(),
  };
}

/** A collector that is down fails every export, several a second: the log says so once a minute, with the count. */
function throttled(warn: (fields: Record<string, unknown>, message: string) => void) {
  let lastAt = Number.NEGATIVE_INFINITY;
  let heldBack = 0;
  return (problem: string) => {
    const now = performance.now();
    if (now - lastAt < PROBLEM_LINE_EVERY_MS) {
      heldBack += 1;
      return;
    }
    // Outside any span: the export runs in the context of whichever request's span filled the batch.
    context.with(ROOT_CONTEXT, () =>
      warn({ problem, ...(heldBack > 0 && { heldBack }) }, 'traces are not reaching the OTLP endpoint'),
    );
    lastAt = now;
    heldBack = 0;
  };
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
