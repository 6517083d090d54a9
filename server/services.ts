import type { Deps } from '../domain/ports.ts';
import type { CurrentTrace } from '../domain/trace.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import type { FairUse } from './pipeline/fair-use.ts';

export interface TestClockControl {
  advance(seconds: number): Date;
}

/**
 * One unit of work (adapters/persistence/unit-of-work.ts): one EntityManager, forked when first needed, its
 * repositories, and the process's services beside them (`deps`).
 */
export interface UnitOfWork {
  readonly deps: Deps;
  /** Runs work in one transaction on the unit: its changes and their events commit together or not at all. */
  transaction<T>(work: (deps: Deps) => Promise<T>): Promise<T>;
  /**
   * Runs work as statements that commit each on its own: reads, and work whose one write is a single atomic statement
   * (accepting a command), where a transaction would only add round trips.
   */
  statements<T>(work: (deps: Deps) => Promise<T>): Promise<T>;
  /**
   * The same, where the reads CONTRACT §12 names may be answered by a read replica within REPLICA_MAX_LAG_MS, for the
   * rest of the unit (a legacy listing reads its batches after its procedure has answered).
   */
  replica<T>(work: (deps: Deps) => Promise<T>): Promise<T>;
}

/** What procedures may use: built once by the composition root and handed over in every context. */
export interface Services {
  config: Config;
  log: Logger;
  /** This process's metrics. */
  metrics: Metrics;
  /** What GET /metrics answers: this process's metrics, or in a cluster every process's, added up. */
  scrapeMetrics(): Promise<string>;
  /**
   * A new unit of work: one per request (its context holds it), one per round of a worker task. `trace`: the trace
   * context of the work it runs (CONTRACT §13), kept with the commands and events it writes; none by default.
   */
  unitOfWork(trace?: CurrentTrace): UnitOfWork;
  /** Present only with TEST_CLOCK=1. */
  testClock: TestClockControl | null;
  /** Fair use between accounts: the door before express, and the lanes (server/pipeline/fair-use.ts). */
  fairUse: FairUse;
  /** Whether the service can answer: the database responds and no shutdown has begun. */
  ready(): Promise<boolean>;
}
