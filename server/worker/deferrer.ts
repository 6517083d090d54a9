import type { Deferrer, Deps } from '../../domain/ports.ts';
import type { Logger } from '../logger.ts';

/**
 * Deferred work of this process: started after the answer, awaited at shutdown, failures logged only.
 * It starts after a random delay of up to `jitterMs`, so that the load it causes (a mail for a registered
 * address, none for an unknown one) does not line up with the answer it follows.
 */
export function createDeferrer(
  runInUnitOfWork: <T>(work: (deps: Deps) => Promise<T>) => Promise<T>,
  log: Logger,
  jitterMs = 25,
) {
  const inFlight = new Set<Promise<void>>();
  const deferrer: Deferrer & { drain(): Promise<void> } = {
    defer(name, work) {
      const task = new Promise<void>((resolve) => setTimeout(resolve, Math.random() * jitterMs))
        .then(() => runInUnitOfWork(work))
        .catch((err: unknown) => log.error({ err, task: name }, 'deferred work failed'))
        .finally(() => inFlight.delete(task));
      inFlight.add(task);
    },
    /** Resolves when no deferred work is left, including work deferred meanwhile. */
    async drain() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
  return deferrer;
}
