// Fair use: counts per key, login attempts, and streams at once per account.

/** A count of requests per key within a window, shared by every process where the database is a server. */
export interface RateLimiter {
  /** Counts one request; answers the seconds to wait when the limit is exceeded, else null. */
  consume(key: string): Promise<number | null>;
  /**
   * Without counting: the seconds to wait when the key is already known to be refused for the rest of its window
   * (remembered in this process), else null. Cheap enough to ask before any lookup.
   */
  peek(key: string): number | null;
}

/** A stream of one account under way; released when it ends, whichever way. */
export interface StreamSlot {
  release(): Promise<void>;
}

/** Streams at once per account (CONTRACT §1: at most 2 legacy listings). */
export interface StreamSlots {
  /** A slot for one more stream of the account, or null when all are taken. */
  take(accountId: string): Promise<StreamSlot | null>;
}

export interface LoginRateLimiter {
  /** Counts one login attempt; answers the seconds to wait when a limit is exceeded, else null. */
  consume(email: string, clientAddress: string): Promise<number | null>;
}
