import { DatabaseSetupError } from '../adapters/persistence/database/database.ts';
import { bindPort, type BoundPort } from './http/bind-port.ts';
import type { BuiltApp } from './compose.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { readyLine, startLine } from './console-lines.ts';
import { createLogger } from './logger.ts';

/** A setting that cannot work: one plain sentence naming it and the fix, and exit code 1. */
function refuseToStart(error: unknown): never {
  if (!(error instanceof ConfigError) && !(error instanceof DatabaseSetupError)) throw error;
  console.error(error.message);
  process.exit(1);
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  refuseToStart(error);
}

const log = createLogger(config.logLevel, config.logFormat, Boolean(process.stdout.isTTY));
const start = startLine(config);
log.info(start.fields, start.message);
log.flush();
// The last line before dying must reach the log (the logger flushes on exit).
process.on('uncaughtException', (err) => { log.fatal({ err }, 'uncaught exception; exiting'); process.exit(1); });
process.on('unhandledRejection', (err) => { log.fatal({ err }, 'unhandled rejection; exiting'); process.exit(1); });

// The port before anything else, every role: a port that cannot be had stops the process before it opens the
// database or claims work (whatever it claimed would wait a lease for another process). Until the app is built the
// port answers that the service is starting; the rest of the code (compose.ts and all it loads) is loaded meanwhile.
let http: BoundPort;
try {
  http = await bindPort(config.port);
} catch (error) {
  refuseToStart(error);
}
log.debug({ port: http.port }, 'port bound');

let built: BuiltApp;
try {
  const { buildApp } = await import('./compose.ts');
  // The mails' links name the port bound when PUBLIC_URL is not set (PORT=0 binds any).
  built = await buildApp({ ...config, publicUrl: config.publicUrl ?? `http://localhost:${http.port}` }, { logger: log });
} catch (error) {
  refuseToStart(error);
}

const server = http.server;
http.serve(built.app);
const ready = readyLine(config, http.port);
log.info(ready.fields, ready.message);
log.flush(); // start-up lines go out at once
if (config.role !== 'api') built.worker.start();

let stopping = false;
let skipDelay = () => {};
async function shutdown(signal: string) {
  if (stopping) {
    skipDelay(); // a second signal: stop draining and close now
    return;
  }
  stopping = true;
  // Only an HTTP API behind a balancer has traffic to drain; a worker stops at once.
  const delayMs = config.role === 'worker' ? 0 : config.shutdownDelayMs;
  log.info({ signal, delayMs }, delayMs > 0
    ? 'shutting down: not ready; serving for SHUTDOWN_DELAY_MS, then no new connections, finishing requests under way'
    : 'shutting down: no new connections, finishing requests under way');
  built.beginShutdown();
  // Readiness is 503 now; balancers that poll it stop sending within their interval. Until then, serve as before.
  if (delayMs > 0) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delayMs);
      skipDelay = () => { clearTimeout(timer); resolve(); };
    });
  }
  setTimeout(() => { log.error('requests did not finish within 15 s; exiting'); process.exit(1); }, 15_000).unref();
  await new Promise<void>((resolve) => {
    // A kept-alive connection busy at the close stays open once its answer is out, until its keep-alive timeout:
    // close connections as they fall idle, so that the listener closes when the last answer is out.
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    server.close(() => { clearInterval(idle); resolve(); });
    server.closeIdleConnections();
  });
  await built.close();
  log.info('stopped');
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
