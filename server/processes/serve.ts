import type { BuildOverrides, BuiltApp } from '../compose.ts';
import type { Config } from '../config.ts';
import { readyLine } from '../console-lines.ts';
import { type BoundPort, bindPort, REQUEST_TIMEOUTS } from '../http/bind-port.ts';
import type { Logger } from '../logger.ts';
import { drainer } from './drain.ts';
import { onStopSignals } from './signals.ts';

/** Stops the start with one plain sentence when the error is a setting or a database that cannot work (main.ts). */
export type Refuse = (error: unknown) => never;

/**
 * Builds the app (compose.ts and all it loads are imported here, once the port is settled). The mails' links name
 * `port` when PUBLIC_URL is not set (PORT=0 binds any).
 */
export async function buildOrRefuse(
  config: Config,
  log: Logger,
  refuse: Refuse,
  port: number,
  overrides: BuildOverrides = {},
): Promise<BuiltApp> {
  try {
    const { buildApp } = await import('../compose.ts');
    return await buildApp(
      { ...config, publicUrl: config.publicUrl ?? `http://localhost:${port}` },
      { ...overrides, logger: log },
    );
  } catch (error) {
    refuse(error);
  }
}

/** One process doing all its role says: HTTP, background work or both. */
export async function serveAlone(config: Config, log: Logger, refuse: Refuse, flush?: () => Promise<void>) {
  // The port before anything else, every role: a port that cannot be had stops the process before it opens the
  // database or claims work (whatever it claimed would wait a lease for another process). Until the app is built the
  // port answers that the service is starting; the rest of the code is loaded meanwhile.
  let http: BoundPort;
  try {
    http = await bindPort(config.port, REQUEST_TIMEOUTS, { traced: config.tracing });
  } catch (error) {
    refuse(error);
  }
  log.debug({ port: http.port }, 'port bound');

  const built = await buildOrRefuse(config, log, refuse, http.port);
  http.serve(built.app);
  if (config.role !== 'api') built.worker.start();
  const drain = drainer(config, log, built, http, flush);
  onStopSignals(
    (signal) => void drain.stop(signal),
    () => drain.hurry(),
  );

  // Said last: the line may reach a reader (a supervisor, a test) before this thread's next step, since the logger
  // writes from libuv's threads; a stop signal sent on reading it must find its handler.
  const ready = readyLine(config, http.port);
  log.info(ready.fields, ready.message);
  log.flush(); // start-up lines go out at once
}
