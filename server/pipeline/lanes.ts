import pLimit, { type LimitFunction } from 'p-limit';
import { DomainError } from '../../domain/errors.ts';

/**
 * Runs a request's admission (its count), then its work, in its account's lane; an admission refused (RATE_LIMITED)
 * paces the account. `open()` says how many lanes are open now.
 */
export interface AccountLanes {
  <A, T>(accountId: string, admit: () => Promise<A>, work: (admitted: A) => Promise<T>): Promise<T>;
  open(): number;
  /** Whether some account is paced in this process now: when none is, `refuseWhileBehind` refuses nobody. */
  pacingAny(): boolean;
  /** Refuses (RATE_LIMITED) a request of a paced account whose turn is too far away, without queueing it. */
  refuseWhileBehind(accountId: string): void;
}

/** How an account that went past its share is paced in this process. */
export interface Pacing {
  /**
   * Between a paced account's request starting `startsInMs` from now and its next one here: what is left of its share
   * spread over the rest of that window.
   */
  intervalMs(accountId: string, startsInMs: number): number;
  /** A request whose turn is further away than this is refused at once instead of waiting (429, as past its share). */
  maxWaitMs: number;
  /** An account stays paced this long after it was last refused (its admission, or a turn too far away). */
  memoryMs: number;
  now(): number;
  sleep(ms: number): Promise<void>;
}

interface Lane {
  run: LimitFunction;
  /** Working and waiting: the last one out closes the lane, unless it is still paced. */
  requests: number;
  pacedUntil: number;
  nextStart: number;
  closing?: ReturnType<typeof setTimeout>;
}

/**
 * Per account, at most `perAccount` requests worked on at once in this process; the account's others wait their turn,
 * in order. The rate limit bounds how many an account sends in a window, not how fast: a tenant hammering the service
 * would otherwise get its whole next share the moment its window starts, all at once, and every other tenant would
 * wait behind that burst for the pool and the cores. So an account refused for its share is paced for a while: its
 * requests start `intervalMs` apart here, in order, and one that would wait longer than `maxWaitMs` for its turn is
 * refused at once (it is past its share anyway); it stays paced until `memoryMs` after its last refusal. An account
 * never refused is never paced, and no account ever waits for another. `waiting` reports the requests held back (a
 * gauge).
 */
export function accountLanes(perAccount: number, waiting: { inc(): void; dec(): void }, pacing: Pacing): AccountLanes {
  const lanes = new Map<string, Lane>();

  const close = (accountId: string, lane: Lane) => {
    if (lane.requests > 0 || lanes.get(accountId) !== lane) return;
    const pacedFor = lane.pacedUntil - pacing.now();
    if (pacedFor <= 0) {
      lanes.delete(accountId);
      return;
    }
    clearTimeout(lane.closing);
    lane.closing = setTimeout(() => close(accountId, lane), pacedFor + 1);
    lane.closing.unref?.();
  };

  /** Until when some lane is paced: before then, some request may be refused at the door. */
  let pacingEnd = 0;
  const pace = (lane: Lane) => {
    lane.pacedUntil = pacing.now() + pacing.memoryMs;
    pacingEnd = Math.max(pacingEnd, lane.pacedUntil);
  };
  const behind = (lane: Lane, now: number) => lane.pacedUntil > now && lane.nextStart - now > pacing.maxWaitMs;

  /** When this request of a paced lane may start (booked in arrival order), or null when that is too far away. */
  const turnIn = (accountId: string, lane: Lane): number | null => {
    const now = pacing.now();
    if (lane.pacedUntil <= now) return 0;
    if (behind(lane, now)) return null;
    const start = Math.max(now, lane.nextStart);
    lane.nextStart = start + pacing.intervalMs(accountId, start - now);
    return start - now;
  };
  /** Refused for being too far behind: come back when the account's queue here has drained. */
  const refused = (lane: Lane, now: number) =>
    new DomainError(
      'RATE_LIMITED',
      'Too many requests for this account: slow down.',
      [],
      Math.max(1, Math.ceil((lane.nextStart - now) / 1000)),
    );

  const inLane = async <A, T>(
    accountId: string,
    admit: () => Promise<A>,
    work: (admitted: A) => Promise<T>,
  ): Promise<T> => {
    let lane = lanes.get(accountId);
    if (!lane) lanes.set(accountId, (lane = { run: pLimit(perAccount), requests: 0, pacedUntil: 0, nextStart: 0 }));
    const own = lane;
    clearTimeout(own.closing);
    own.requests++;
    let held = false;
    const hold = (on: boolean) => {
      if (on !== held) on ? waiting.inc() : waiting.dec();
      held = on;
    };
    try {
      const wait = turnIn(accountId, own);
      if (wait === null) {
        pace(own);
        throw refused(own, pacing.now());
      }
      if (wait > 0) {
        hold(true);
        await pacing.sleep(wait);
      }
      hold(own.run.activeCount >= perAccount);
      return await own.run(async () => {
        hold(false);
        const admitted = await admit().catch((error: unknown) => {
          if (error instanceof DomainError && error.code === 'RATE_LIMITED') pace(own);
          throw error;
        });
        return work(admitted);
      });
    } finally {
      hold(false);
      own.requests--;
      close(accountId, own);
    }
  };
  return Object.assign(inLane, {
    open: () => lanes.size,
    pacingAny: () => pacing.now() < pacingEnd,
    refuseWhileBehind(accountId: string) {
      const lane = lanes.get(accountId);
      const now = pacing.now();
      if (lane && behind(lane, now)) {
        pace(lane);
        throw refused(lane, now);
      }
    },
  });
}
