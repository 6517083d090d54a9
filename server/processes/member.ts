import type { BuiltApp } from '../compose.ts';
import type { Config } from '../config.ts';
import { type BoundPort, bindPort } from '../http/bind-port.ts';
import type { Logger } from '../logger.ts';
import { drainer } from './drain.ts';
import { isPrimaryMessage, type MemberMessage } from './messages.ts';
import { buildOrRefuse, type Refuse } from './serve.ts';

/** How long an API process waits for the primary's gathering of every process's metrics. */
const SCRAPE_TIMEOUT_MS = 5000;

/**
 * A process the primary forked (server/processes/primary.ts): an API process (SERVICE_ROLE=api), which joins the
 * shared port once its app is built, or the worker (SERVICE_ROLE=worker), which serves no port. It stops when the
 * primary says so; should the primary die, node:cluster ends it at once (its claims are taken up after their leases).
 */
export async function serveAsMember(config: Config, log: Logger, refuse: Refuse, flush?: () => Promise<void>) {
  const tell = (message: MemberMessage) => process.send?.(message);
  let built: BuiltApp | null = null;
  let listener: BoundPort | null = null;
  let drain: ReturnType<typeof drainer> | null = null;
  let stopAsked = false;
  const scrapes = new Map<number, (text: string | null) => void>();
  let scrapeIds = 0;

  // Ctrl-C in a terminal signals the whole process group, and a service manager may signal every process: the
  // primary relays one stop to each, so that none drains twice, or before it is told.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => {});

  const stop = async () => {
    stopAsked = true;
    if (!built) return; // still building: it stops once built
    drain ??= drainer(config, log, built, listener, flush);
    await drain.stop('the primary');
    process.exit(0); // the IPC channel would keep the process alive
  };
  process.on('message', (message) => {
    if (!isPrimaryMessage(message)) return;
    switch (message.pbi) {
      case 'listen':
        void listen();
        break;
      case 'stop':
        void stop();
        break;
      case 'hurry':
        drain?.hurry();
        break;
      case 'report?':
        void (built?.services.metrics.registry.getMetricsAsJSON() ?? Promise.resolve([])).then((metrics) =>
          tell({ pbi: 'report', id: message.id, metrics }),
        );
        break;
      case 'scraped':
        scrapes.get(message.id)?.(message.text);
        break;
    }
  });

  const scrapeMetrics = () =>
    new Promise<string>((resolve, reject) => {
      const id = ++scrapeIds;
      const timer = setTimeout(() => scrapes.get(id)?.(null), SCRAPE_TIMEOUT_MS);
      scrapes.set(id, (text) => {
        clearTimeout(timer);
        scrapes.delete(id);
        if (text === null) reject(new Error('the metrics of the other processes could not be gathered'));
        else resolve(text);
      });
      tell({ pbi: 'scrape', id });
    });

  // The worker says what holds for the whole start (every cluster has one); the API processes would repeat it.
  built = await buildOrRefuse(config, log, refuse, config.port, {
    scrapeMetrics,
    sayStartAdvice: config.role === 'worker',
  });
  if (stopAsked) {
    await built.close();
    process.exit(0);
  }
  if (config.role === 'worker') built.worker.start();
  log.flush(); // start-up lines go out at once
  tell({ pbi: 'built' });

  async function listen() {
    if (!built || listener || stopAsked) return;
    try {
      const http = await bindPort(config.port); // through the primary: every API process shares its listening socket
      if (stopAsked) {
        http.server.close();
        return;
      }
      listener = http;
      http.serve(built.app);
    } catch (error) {
      refuse(error);
    }
    log.info({ port: config.port, role: config.role }, 'listening');
    log.flush();
    tell({ pbi: 'listening' });
  }
}
