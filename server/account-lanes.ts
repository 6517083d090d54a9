import pLimit, { type LimitFunction } from 'p-limit';

/** Runs an admitted request's work in its account's lane. */
export type AccountLanes = <T>(accountId: string, work: () => Promise<T>) => Promise<T>;

/**
 * Per account, at most `perAccount` requests worked on at once in this process; the account's others wait their turn,
 * in order. The rate limit bounds how many an account sends in a second, not how many at once: a tenant's second's
 * share arriving together would take the pool and the event loop for everyone meanwhile. In its lane it only waits
 * for itself. `waiting` reports the requests held back (a gauge).
 */
export function accountLanes(perAccount: number, waiting: { inc(): void; dec(): void }): AccountLanes {
  const lanes = new Map<string, LimitFunction>();
  return (accountId, work) => {
    let lane = lanes.get(accountId);
    if (!lane) lanes.set(accountId, (lane = pLimit(perAccount)));
    const held = lane.activeCount >= perAccount;
    if (held) waiting.inc();
    const own = lane;
    return own(async () => {
      if (held) waiting.dec();
      try {
        return await work();
      } finally {
        // The last one out closes the lane: the map holds only accounts with requests under way.
        if (own.activeCount === 1 && own.pendingCount === 0) lanes.delete(accountId);
      }
    });
  };
}
