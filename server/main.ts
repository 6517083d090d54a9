import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DatabaseLockedError } from '../adapters/persistence/database.ts';
import { buildApp, type BuiltApp } from './compose.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createLogger } from './logger.ts';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}

const log = createLogger(config.logLevel);
let built: BuiltApp;
try {
  built = await buildApp(config, { logger: log });
} catch (error) {
  if (!(error instanceof DatabaseLockedError)) throw error;
  log.fatal(error.message);
  await new Promise<void>((resolve) => log.flush(() => resolve()));
  process.exit(1);
}

const server = createServer(built.app);
server.keepAliveTimeout = 65_000;
server.listen(config.port, () => {
  const { port } = server.address() as AddressInfo;
  log.info({ port, role: config.role }, 'listening');
  log.flush(); // start-up lines go out at once; request lines are written in blocks
});
if (config.role !== 'api') built.worker.start();

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down: no new connections, finishing requests under way');
  built.beginShutdown();
  setTimeout(() => { log.error('requests did not finish within 15 s; exiting'); process.exit(1); }, 15_000).unref();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  await built.close();
  log.info('stopped');
  log.flush();
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
