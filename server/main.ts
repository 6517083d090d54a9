import cluster from 'node:cluster';
import { DatabaseSetupError } from '../adapters/persistence/database/database.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { startLine } from './console-lines.ts';
import { createLogger } from './logger.ts';
import { layoutOf } from './processes/layout.ts';

/** A setting that cannot work: one plain sentence naming it and the fix, and exit code 1. */
function refuseToStart(error: unknown): never {
  if (!(error instanceof ConfigError) && !(error instanceof DatabaseSetupError)) throw error;
  // A cluster's processes meet the same cause together: the primary prints the line once (server/processes/). A small
  // message on an idle IPC channel is written before send() returns, so exiting at once loses nothing; a channel that
  // cannot take it leaves the line to this process.
  if (!(cluster.isWorker && process.send?.({ pbi: 'refused', line: error.message }))) console.error(error.message);
  process.exit(1);
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  refuseToStart(error);
}

// Tracing before anything else is loaded (CONTRACT §13), in every process (a cluster's primary answers the requests
// that come while its processes start); with no OTLP endpoint set, nothing of it loads.
const tracing = config.tracing ? await import('../adapters/tracing.ts') : null;
const traces = await tracing?.startTracing(process.env);
// The last spans go out when a process stops (a drain ends in process.exit, where nothing would wait for them).
const flushTraces = traces && (() => traces.shutdown());
const log = createLogger(config.logLevel, config.logFormat, Boolean(process.stdout.isTTY), { traced: config.tracing });
traces?.reportProblemsTo((fields, message) => log.warn(fields, message));
// The last line before dying must reach the log (the logger flushes on exit).
process.on('uncaughtException', (err) => {
  log.fatal({ err }, 'uncaught exception; exiting');
  process.exit(1);
});
process.on('unhandledRejection', (err) => {
  log.fatal({ err }, 'unhandled rejection; exiting');
  process.exit(1);
});

// One process, or a primary forking API processes and a worker (server/processes/layout.ts); a forked process knows
// itself by node:cluster, and its lines carry its pid. The first line goes out before the rest of the code is loaded.
const layout = layoutOf(config);
if (cluster.isWorker) {
  const { serveAsMember } = await import('./processes/member.ts');
  await serveAsMember(config, log.child({ pid: process.pid }), refuseToStart, flushTraces);
} else {
  const start = startLine(config);
  log.info(start.fields, start.message);
  if (layout.kind === 'one' && layout.reason) log.info(layout.reason);
  log.flush();
  if (layout.kind === 'cluster') {
    const { runPrimary } = await import('./processes/primary.ts');
    await runPrimary(config, layout, log, refuseToStart, import.meta.url, flushTraces);
  } else {
    const { serveAlone } = await import('./processes/serve.ts');
    await serveAlone(config, log, refuseToStart, flushTraces);
  }
}
