import type { RequestListener } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { Deps, RateLimiter } from '../../domain/ports.ts';
import { refuseEarlyPastShare } from '../../domain/use-cases/fair-use-refusal.ts';
import type { RestOperation } from '../http/rest-routes.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { RouteTable } from '../routers/contracts.ts';
import { fairUseDoor } from './door.ts';
import { accountLanes } from './lanes.ts';

/**
 * The shared count of an account's requests per second (CONTRACT §1, `API_RATE_LIMIT_PER_ACCOUNT`), with what this
 * process remembers of it: the domain counts and peeks; fair use here also asks whether anyone is refused, and how far
 * apart an account's requests should start to spread what is left of its share.
 */
export interface ShareCounter extends RateLimiter {
  /** Whether any key is refused from memory now: while none is, nothing is worth asking before the lookup. */
  refusingAny(): boolean;
  /**
   * How far apart the key's requests from `startsInMs` from now would start to spread what is left of its share evenly
   * over the rest of its window then (ms), from the last count this process saw for it; null when it saw none in that
   * window, or none was left.
   */
  spacingMs(key: string, startsInMs?: number): number | null;
}

/** Fair use of the service between accounts, in one place: the door before express, and the lanes behind it. */
export interface FairUse {
  /**
   * `app` behind the door: an account this process already refuses gets its 429 before express (door.ts); `routes`
   * are the app's, for the roles each documented operation serves (the door refuses only tokens of those roles).
   */
  door(routes: RouteTable, operations: readonly RestOperation[], app: RequestListener): RequestListener;
  /**
   * Runs a request's admission (its count), then its work, in its account's lane (lanes.ts): at most
   * API_CONCURRENCY_PER_ACCOUNT at once in this process, and an account past its share paced.
   */
  admit<A, T>(accountId: string, admission: () => Promise<A>, work: (admitted: A) => Promise<T>): Promise<T>;
}

export interface FairUseOptions {
  /** API_RATE_LIMIT_PER_ACCOUNT: requests per account and second. */
  share: number;
  /** API_CONCURRENCY_PER_ACCOUNT: requests of one account worked on at once in this process. */
  concurrency: number;
  counter: ShareCounter;
  /** To read a token at the door, before anything else. */
  tokens: Pick<Deps, 'tokens' | 'clock'>;
  metrics: Metrics;
  log: Logger;
}

export function createFairUse({ share, concurrency, counter, tokens, metrics, log }: FairUseOptions): FairUse {
  const lanes = accountLanes(concurrency, metrics.accountLaneWaiting, {
    // Past its share, an account's next share is spread over its window (1 s) instead of arriving in one burst: what is
    // left of it over what is left of the window, as the shared count last told this process, and never faster than
    // its share's own pace here.
    intervalMs: (accountId, startsInMs) => Math.max(1000 / share, counter.spacingMs(accountId, startsInMs) ?? 0),
    maxWaitMs: 1000,
    memoryMs: 3000,
    now: () => performance.now(),
    sleep: (ms) => delay(ms),
  });
  const refusals = {
    any: () => counter.refusingAny() || lanes.pacingAny(),
    // Past its share for the rest of its window (domain/use-cases/fair-use-refusal.ts), or paced with its next turn too
    // far away.
    check: async (input: { accessToken: string | null; roles: readonly ('brand' | 'partner')[] }) => {
      const caller = await refuseEarlyPastShare({ ...tokens, requestLimiter: counter }, input);
      if (caller) lanes.refuseWhileBehind(caller.accountId);
    },
  };
  return {
    door: (routes, operations, app) => fairUseDoor(routes, operations, { refusals, metrics, log }, app),
    admit: (accountId, admission, work) => lanes(accountId, admission, work),
  };
}
