import type { Role } from '../domain/account.ts';
import type { Deps } from '../domain/ports.ts';
import type { AccountLanes } from './account-lanes.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';

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
}

/** What procedures may use: built once by the composition root and handed over in every context. */
export interface Services {
  config: Config;
  log: Logger;
  /** This process's metrics (GET /metrics). */
  metrics: Metrics;
  /** A new unit of work: one per request (its context holds it), one per round of a worker task. */
  unitOfWork(): UnitOfWork;
  /** Present only with TEST_CLOCK=1. */
  testClock: TestClockControl | null;
  /**
   * Fair use decided before the request path runs: throws RATE_LIMITED for an account refused in this process, past its
   * share (domain/use-cases/fair-use-refusal.ts) or paced with its next turn too far away (server/account-lanes.ts).
   */
  refuseEarly(input: { accessToken: string | null; roles: readonly Role[] }): Promise<void>;
  /** Whether `refuseEarly` could refuse anyone now (some account is refused or paced in this process): when not, it is skipped. */
  mayRefuseEarly(): boolean;
  /** Runs a request's admission and work in its account's lane: at most API_CONCURRENCY_PER_ACCOUNT at once in this process. */
  inAccountLane: AccountLanes;
  /** Whether the service can answer: the database responds and no shutdown has begun. */
  ready(): Promise<boolean>;
}
