import { createHash } from 'node:crypto';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import type { LoginRateLimiter, RateLimiter } from '../domain/ports.ts';

export interface LoginLimits {
  perEmail: number;
  perAddress: number;
}

// Addresses are hashed before they become keys: the counters table holds no e-mail address.
const keyOf = (value: string) => createHash('sha256').update(value).digest('base64url');

/** Login attempts per e-mail and per client address, each within a fixed minute (rate-limiter-flexible). */
export class FlexibleLoginRateLimiter implements LoginRateLimiter {
  constructor(
    private readonly perEmail: RateLimiterAbstract,
    private readonly perAddress: RateLimiterAbstract,
  ) {}

  async consume(email: string, clientAddress: string): Promise<number | null> {
    const results = await Promise.allSettled([
      this.perEmail.consume(keyOf(email)),
      this.perAddress.consume(keyOf(clientAddress)),
    ]);
    let waitMs = 0;
    for (const result of results) {
      if (result.status === 'fulfilled') continue;
      if (!(result.reason instanceof RateLimiterRes)) throw result.reason;
      waitMs = Math.max(waitMs, result.reason.msBeforeNext);
    }
    return waitMs > 0 ? Math.ceil(waitMs / 1000) : null;
  }

  /** Counters in this process only: right for the embedded database, which serves one process. */
  static inMemory(limits: LoginLimits) {
    return new FlexibleLoginRateLimiter(
      new RateLimiterMemory({ keyPrefix: 'login-email', points: limits.perEmail, duration: 60 }),
      new RateLimiterMemory({ keyPrefix: 'login-addr', points: limits.perAddress, duration: 60 }),
    );
  }

  /** Counters in PostgreSQL (table `login_rate_limits`, made by a migration), shared by every process. */
  static inPostgres(limits: LoginLimits, knex: unknown) {
    const options = {
      storeClient: knex,
      storeType: 'knex',
      tableName: 'login_rate_limits',
      tableCreated: true,
      duration: 60,
    };
    return new FlexibleLoginRateLimiter(
      new RateLimiterPostgres({ ...options, keyPrefix: 'login-email', points: limits.perEmail }),
      new RateLimiterPostgres({ ...options, keyPrefix: 'login-addr', points: limits.perAddress }),
    );
  }
}

/**
 * Requests per key within a fixed window (rate-limiter-flexible): in this process for the embedded database, in
 * PostgreSQL otherwise. The counters share the login limiter's table, under their own key prefix.
 *
 * On a server each count is a round trip, the largest single cost of a request after its own work. So a process
 * counts a large share in slices: one upsert takes `slice` points of the key's window at once, and the process hands
 * them out to its next requests of that window from memory. The count stays in PostgreSQL, shared by every process,
 * ahead of the requests it stands for; what a process took and did not use is refused to the others for the rest of
 * the window, at most a slice less one per process. A slice is a 64th of the share, so a share under 128 (the
 * default is 50) is counted request by request, as before.
 */
export class FlexibleRateLimiter implements RateLimiter {
  /** When the last refusal this process saw ends (epoch ms): until then some key may be refused from memory. */
  private refusalsEnd = 0;
  /**
   * Per key, from its last count here: what was left of its share, and when its window ends (epoch ms); `taken`, the
   * points of the last slice not yet handed out here.
   */
  private readonly shares = new Map<string, { remaining: number; until: number; taken: number }>();
  /** Slices being taken, per key: the key's other requests meanwhile wait for it instead of taking one each. */
  private readonly taking = new Map<string, Promise<unknown>>();
  /** The map's size at which its ended windows are swept out next. */
  private sweepAt = 10_000;
  constructor(
    private readonly limiter: RateLimiterAbstract,
    private readonly slice = 1,
  ) {}

  async consume(key: string): Promise<number | null> {
    for (;;) {
      const share = this.shares.get(key);
      if (share && share.taken > 0 && share.until > Date.now()) {
        share.taken--;
        // With nothing left, the rest of its window is refused as it comes: no spacing to offer.
        if (--share.remaining === 0) this.shares.delete(key);
        return null;
      }
      const under = this.taking.get(key);
      if (!under) break;
      await under.catch(() => {});
    }
    const counting = this.count(key);
    if (this.slice === 1) return counting;
    this.taking.set(key, counting);
    try {
      return await counting;
    } finally {
      this.taking.delete(key);
    }
  }

  private async count(key: string): Promise<number | null> {
    try {
      const counted = await this.limiter.consume(key, this.slice);
      this.rememberShare(key, counted, this.slice - 1);
      return null;
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      this.shares.delete(key);
      this.refusalsEnd = Math.max(this.refusalsEnd, Date.now() + rejection.msBeforeNext);
      // A slice past the share: this request's own point may still have been within it (a refusal from memory counted
      // nothing).
      const counted = rejection.consumedPoints;
      if (counted > this.limiter.points && counted - this.slice < this.limiter.points) return null;
      return Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
    }
  }

  spacingMs(key: string, startsInMs = 0): number | null {
    const share = this.shares.get(key);
    const at = Date.now() + startsInMs;
    return share && share.until > at ? (share.until - at) / (share.remaining + 1) : null;
  }

  private rememberShare(key: string, counted: RateLimiterRes, taken: number) {
    const now = Date.now();
    if (this.shares.size >= this.sweepAt) {
      for (const [k, v] of this.shares) if (v.until <= now) this.shares.delete(k);
      this.sweepAt = Math.max(10_000, this.shares.size * 2);
    }
    // With nothing left, the rest of its window is refused as it comes: no spacing to offer.
    if (counted.remainingPoints + taken === 0) this.shares.delete(key);
    else this.shares.set(key, { remaining: counted.remainingPoints + taken, until: now + counted.msBeforeNext, taken });
  }

  refusingAny(): boolean {
    return this.remembersRefusals() && Date.now() < this.refusalsEnd;
  }

  private remembersRefusals() {
    return (
      typeof (this.limiter as { getInMemoryBlockMsBeforeExpire?: unknown }).getInMemoryBlockMsBeforeExpire ===
      'function'
    );
  }

  peek(key: string): number | null {
    // Only the store limiters remember a refusal in memory; counting in this process's memory costs nothing anyway.
    const limiter = this.limiter as RateLimiterAbstract & {
      getInMemoryBlockMsBeforeExpire?(rlKey: string): number;
      getKey(key: string): string;
    };
    const ms = limiter.getInMemoryBlockMsBeforeExpire?.(limiter.getKey(key)) ?? 0;
    return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : null;
  }

  static inMemory(keyPrefix: string, points: number, durationSeconds: number) {
    return new FlexibleRateLimiter(new RateLimiterMemory({ keyPrefix, points, duration: durationSeconds }));
  }

  static inPostgres(keyPrefix: string, points: number, durationSeconds: number, knex: unknown) {
    const slice = Math.max(1, Math.floor(points / 64));
    return new FlexibleRateLimiter(
      new RateLimiterPostgres({
        storeClient: knex,
        storeType: 'knex',
        tableName: 'login_rate_limits',
        tableCreated: true,
        keyPrefix,
        points,
        duration: durationSeconds,
        // A key refused once is refused from this process's memory until its window ends: a tenant hammering past its
        // share costs no database round trip per request (rate-limiter-flexible's inMemoryBlockOnConsumed).
        inMemoryBlockOnConsumed: points + 1,
      }),
      slice,
    );
  }
}
