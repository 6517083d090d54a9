import { hostname } from 'node:os';
import { DiagLogLevel, diag, propagation, trace } from '@opentelemetry/api';

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
 * `http/protobuf` or `http/json`, `OTEL_SERVICE_NAME`, `OTEL_BSP_SCHEDULE_DELAY`), with W3C trace context. The SDK is
 * loaded only here: with no endpoint set nothing of it loads, and the API's calls elsewhere stay no-ops.
 *
 * No context manager: a span's context is handed on by hand (a request's, a lane's, an attempt's: see
 * server/http/request-traces.ts and server/worker/spans.ts). The SDK's, on AsyncLocalStorage, turns Node's promise
 * hooks on for the whole process, and every promise of every request paid for them (docs/BENCHMARKS.md, Tracing).
 */
export async function startTracing(env: NodeJS.ProcessEnv): Promise<Tracing> {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  const [{ TracerProvider, BatchSpanProcessor }, { W3CTraceContextPropagator, setGlobalErrorHandler }] =
    await Promise.all([import('@opentelemetry/sdk-trace'), import('@opentelemetry/core')]);
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
    warn({ problem, ...(heldBack > 0 && { heldBack }) }, 'traces are not reaching the OTLP endpoint');
    lastAt = now;
    heldBack = 0;
  };
}
