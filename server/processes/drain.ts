import type { BuiltApp } from '../compose.ts';
import type { Config } from '../config.ts';
import type { BoundPort } from '../http/bind-port.ts';
import type { Logger } from '../logger.ts';

/** How long the requests under way (and the worker's claims) may take to finish after the delay. */
const FINISH_WITHIN_MS = 15_000;

/**
 * The shutdown of a serving process (docs/operators.md, "Liveness, readiness and shutdown"): readiness 503 at once,
 * SHUTDOWN_DELAY_MS of serving on (an HTTP API only), then no new connections, the requests under way and the worker's
 * claims finished, the database closed. `stop` is idempotent; `hurry` ends the delay (a second signal).
 */
export function drainer(
  config: Config,
  log: Logger,
  built: BuiltApp,
  listener: Pick<BoundPort, 'server' | 'closeIdle'> | null,
  /** What the process sends out last, once the app is closed (the trace exporter's last spans). */
  flush?: () => Promise<void>,
) {
  let stopped: Promise<void> | null = null;
  let skipDelay = () => {};

  async function drain(reason: string) {
    // Only an HTTP API behind a balancer has traffic to drain; a worker stops at once.
    const delayMs = listener === null || config.role === 'worker' ? 0 : config.shutdownDelayMs;
    log.info(
      { signal: reason, delayMs },
      delayMs > 0
        ? 'shutting down: not ready; serving for SHUTDOWN_DELAY_MS, then no new connections, finishing requests under way'
        : 'shutting down: no new connections, finishing requests under way',
    );
    built.beginShutdown();
    // Readiness is 503 now; balancers that poll it stop sending within their interval. Until then, serve as before.
    if (delayMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        skipDelay = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    setTimeout(() => {
      log.error('requests did not finish within 15 s; exiting');
      process.exit(1);
    }, FINISH_WITHIN_MS).unref();
    if (listener) {
      await new Promise<void>((resolve) => {
        // A kept-alive connection busy at the close stays open once its answer is out, until its keep-alive timeout:
        // close connections as they fall idle, so that the listener closes when the last answer is out.
        const idle = setInterval(() => listener.closeIdle(), 100);
        listener.server.close(() => {
          clearInterval(idle);
          resolve();
        });
        listener.closeIdle();
      });
    }
    await built.close();
    await flush?.();
    log.info('stopped');
  }

  return {
    stop: (reason: string) => (stopped ??= drain(reason)),
    hurry: () => skipDelay(),
    get stopping() {
      return stopped !== null;
    },
  };
}
