import pLimit, { type LimitFunction } from 'p-limit';

/** Runs a request's work in its account's lane; `open()` says how many lanes are open now. */
export interface AccountLanes {
  <T>(accountId: string, work: () => Promise<T>): Promise<T>;
  open(): number;
}

/**
 * Per account, at most `perAccount` requests worked on at once in this process; the account's others wait their turn,
 * in order. The rate limit bounds how many an account sends in a second, not how many at once: a tenant's second's
 * share arriving together would take the pool and the event loop for everyone meanwhile. In its lane it only waits
 * for itself. `waiting` reports the requests held back (a gauge).
 */
export function accountLanes(perAccount: number, waiting: { inc(): void; dec(): void }): AccountLanes {
  // Each lane counts its requests itself (working and waiting): the last one out closes it, so that the map holds only
  // accounts with requests under way.
  const lanes = new Map<string, { run: LimitFunction; requests: number }>();
  const inLane = <T>(accountId: string, work: () => Promise<T>): Promise<T> => {
    let lane = lanes.get(accountId);
    if (!lane) lanes.set(accountId, (lane = { run: pLimit(perAccount), requests: 0 }));
    const own = lane;
    const held = own.requests >= perAccount;
    own.requests++;
    if (held) waiting.inc();
    return own.run(() => {
      if (held) waiting.dec();
      return work();
    }).finally(() => {
      if (--own.requests === 0 && lanes.get(accountId) === own) lanes.delete(accountId);
    });
  };
  return Object.assign(inLane, { open: () => lanes.size });
}
