import type { Config } from '../config.ts';

/** The processes one start runs: one process, or a primary with API processes and a worker sharing the port. */
export type Layout =
  | { kind: 'one'; reason: string | null }
  | { kind: 'cluster'; api: number; worker: 1 };

/**
 * A cluster only where it can work and was not asked against: on a PostgreSQL server, in the `all` role. The embedded
 * database has one connection, which processes cannot share; `api` and `worker` name one process's job (a process
 * manager starts as many as it wants); the test clock lives in one process's memory.
 */
export function layoutOf(config: Pick<Config, 'role' | 'databaseUrl' | 'webConcurrency' | 'testClock'>): Layout {
  if (!config.databaseUrl) return { kind: 'one', reason: 'the embedded database has one connection, which processes cannot share: one process' };
  if (config.role !== 'all') return { kind: 'one', reason: null };
  if (config.testClock) return { kind: 'one', reason: 'TEST_CLOCK moves one process\'s clock: one process' };
  if (config.webConcurrency === 1) return { kind: 'one', reason: null };
  return { kind: 'cluster', api: config.webConcurrency, worker: 1 };
}
