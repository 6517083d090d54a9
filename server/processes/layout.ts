import type { Config } from '../config.ts';
import { usableCpus } from './cpus.ts';

/** The processes one start runs: one process, or a primary with API processes and a worker sharing the port. */
export type Layout = { kind: 'one'; reason: string | null } | { kind: 'cluster'; api: number; worker: 1 };

/**
 * A cluster only where it can work and was not asked against: on a PostgreSQL server, in the `all` role. The embedded
 * database has one connection, which processes cannot share; `api` and `worker` name one process's job (a process
 * manager starts as many as it wants); the test clock lives in one process's memory.
 */
export function layoutOf(
  config: Pick<Config, 'role' | 'databaseUrl' | 'webConcurrency' | 'testClock'>,
  cpus = usableCpus(),
): Layout {
  // A WEB_CONCURRENCY above 1 that one process overrides is said to be ignored, with why.
  const ignored =
    config.webConcurrency !== null && config.webConcurrency > 1
      ? `WEB_CONCURRENCY=${config.webConcurrency} is ignored: `
      : '';
  if (!config.databaseUrl)
    return {
      kind: 'one',
      reason: `${ignored}the embedded database has one connection, which processes cannot share: one process`,
    };
  if (config.role !== 'all') {
    return {
      kind: 'one',
      reason: ignored
        ? `${ignored}SERVICE_ROLE=${config.role} is one process's job (start as many as you need; SERVICE_ROLE=all starts a cluster)`
        : null,
    };
  }
  if (config.testClock) return { kind: 'one', reason: `${ignored}TEST_CLOCK moves one process's clock: one process` };
  const api = config.webConcurrency ?? cpus;
  if (api === 1) return { kind: 'one', reason: null };
  return { kind: 'cluster', api, worker: 1 };
}
