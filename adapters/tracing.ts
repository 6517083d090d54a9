import { hostname } from 'node:os';
import { DiagLogLevel, diag, propagation, trace } from '@opentelemetry/api';
import { sdkProblems } from './tracing-problems.ts';

/** The process's tracing once started: says what goes wrong, and flushes what is left at the end. */
export interface Tracing {
  /** What goes wrong in the SDK, to the process's log from now on (tracing-problems.ts); nothing is written before. */
  reportProblemsTo(warn: (fields: Record<string, unknown>, message: string) => void): void;
  shutdown(): Promise<void>;
}

const DEFAULT_SERVICE_NAME = 'partner-brand-integration-api';

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
  // As server/config.ts checked it: the traces' own setting first, blanks ignored.
  const protocol =
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() || env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || 'http/protobuf';
  const [{ TracerProvider, BatchSpanProcessor }, { W3CTraceContextPropagator, setGlobalErrorHandler }] =
    await Promise.all([import('@opentelemetry/sdk-trace'), import('@opentelemetry/core')]);
  // Before the exporter is built: it warns of the settings it cannot use as it reads them.
  const problems = sdkProblems();
  setGlobalErrorHandler(problems.exportFailed);
  diag.setLogger(
    { error: problems.warned, warn: problems.warned, info: () => {}, debug: () => {}, verbose: () => {} },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
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
  return { reportProblemsTo: (warn) => problems.sendTo(warn), shutdown: () => provider.shutdown() };
}
