import pg from 'pg';

/** How often the primary's WAL position and each replica's replay position are read. */
const CHECK_EVERY_MS = 200;
/** A replica that takes longer than this to connect or to answer a check is left until it answers again. */
const ANSWER_WITHIN_MS = 1000;
/** A read on a replica that takes longer is given up and answered by the primary (it never costs the caller a 5xx). */
const READ_WITHIN_MS = 1500;
/** Primary positions kept: a replica further behind than this is far past any sensible REPLICA_MAX_LAG_MS. */
const SAMPLES_KEPT_MS = 60_000;

export interface ReplicaView {
  /** host:port/database, never the credentials. */
  name: string;
  /** How far behind the primary its answers may be (null until a first check placed it). */
  lagMs: number | null;
  /** Whether reads go to it now. */
  usable: boolean;
}

interface Replica {
  name: string;
  pool: pg.Pool;
  /** The latest primary sample time the replica is known to have replayed to (0: none yet). */
  caughtUpTo: number;
  /** Its last check or read failed: left until a check succeeds. */
  failed: boolean;
}

/** A WAL position (`16/B374D848`) as a number that orders. */
const position = (lsn: string) => {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
};

const nameOf = (url: string) => {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}${u.pathname}`;
};

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The streaming replicas of CONTRACT §12 and how far each lags. The lag is measured against the primary's own WAL
 * position, not the replica's last replayed commit time (wrong on a quiet primary): every CHECK_EVERY_MS the
 * primary's position is sampled with the time, and a replica that has replayed past a sample holds everything the
 * primary had committed when it was taken. Its lag is the age of the newest such sample, so it keeps growing while the
 * replica stops or hangs, and the replica is left as soon as it passes `maxLagMs`.
 */
export class ReplicaSet {
  private readonly replicas: Replica[];
  private readonly primary: pg.Pool;
  private samples: { at: number; lsn: bigint }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private turn = 0;
  private readonly now: () => number;
  private readonly told: (message: string, fields: Record<string, unknown>) => void;
  private readonly served: (database: string) => void;

  constructor(
    primaryUrl: string,
    replicaUrls: readonly string[],
    private readonly maxLagMs: number,
    hooks: {
      /** A §12 read was answered by `database` (`primary`, or a replica's name). */
      served?: (database: string) => void;
      /** A replica failed, or answers again. */
      told?: (message: string, fields: Record<string, unknown>) => void;
      now?: () => number;
    } = {},
  ) {
    this.now = hooks.now ?? Date.now;
    this.told = hooks.told ?? (() => {});
    this.served = hooks.served ?? (() => {});
    const quiet = (pool: pg.Pool) => pool.on('error', () => {}); // an idle connection lost: the next check says so
    this.primary = quiet(new pg.Pool({ connectionString: primaryUrl, max: 1, connectionTimeoutMillis: 5000 }));
    this.replicas = replicaUrls.map((url) => ({
      name: nameOf(url),
      pool: quiet(
        new pg.Pool({
          connectionString: url,
          max: 10,
          connectionTimeoutMillis: ANSWER_WITHIN_MS,
          statement_timeout: READ_WITHIN_MS,
        }),
      ),
      caughtUpTo: 0,
      failed: false,
    }));
  }

  start(): void {
    this.timer ??= setInterval(() => void this.check(), CHECK_EVERY_MS).unref();
    void this.check();
  }

  views(): ReplicaView[] {
    const now = this.now();
    return this.replicas.map((r) => ({
      name: r.name,
      lagMs: r.caughtUpTo === 0 ? null : now - r.caughtUpTo,
      usable: this.usable(r, now),
    }));
  }

  /**
   * Runs a read on a replica that is within the lag, else (none is, or the replica fails or hangs) on the primary by
   * `onPrimary`.
   */
  async read<T>(work: (client: pg.PoolClient) => Promise<T>, onPrimary: () => Promise<T>): Promise<T> {
    const now = this.now();
    const usable = this.replicas.filter((r) => this.usable(r, now));
    const replica = usable[this.turn++ % Math.max(usable.length, 1)];
    if (replica) {
      let client: pg.PoolClient | undefined;
      try {
        client = await replica.pool.connect();
        const answer = await within(work(client), READ_WITHIN_MS);
        client.release();
        this.served(replica.name);
        return answer;
      } catch (error) {
        client?.release(error instanceof Error ? error : true); // not given back: it may still be waiting
        this.fail(replica, error);
      }
    }
    const answer = await onPrimary();
    this.served('primary');
    return answer;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([this.primary, ...this.replicas.map((r) => r.pool)].map((pool) => pool.end().catch(() => {})));
  }

  private usable(r: Replica, now: number): boolean {
    return !r.failed && r.caughtUpTo > 0 && now - r.caughtUpTo <= this.maxLagMs;
  }

  private fail(r: Replica, error: unknown) {
    if (!r.failed)
      this.told('a read replica failed: its reads go to the primary until it answers', { replica: r.name, err: error });
    r.failed = true;
  }

  private async check(): Promise<void> {
    if (this.checking) return; // a check that hangs (a replica that does not answer) does not pile up others
    this.checking = true;
    try {
      const at = this.now();
      try {
        const { rows } = await within(
          this.primary.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn'),
          ANSWER_WITHIN_MS,
        );
        this.samples.push({ at, lsn: position(rows[0]!.lsn) });
        this.samples = this.samples.filter((s) => s.at >= at - SAMPLES_KEPT_MS);
      } catch {
        // The primary away: no new sample, so every replica's lag grows until it answers again.
      }
      await Promise.all(this.replicas.map((r) => this.checkReplica(r)));
    } finally {
      this.checking = false;
    }
  }

  private async checkReplica(r: Replica): Promise<void> {
    try {
      const { rows } = await within(
        r.pool.query<{ lsn: string | null }>('select pg_last_wal_replay_lsn()::text as lsn'),
        ANSWER_WITHIN_MS,
      );
      const replayed = rows[0]?.lsn;
      if (!replayed) throw new Error('not a streaming replica (pg_last_wal_replay_lsn() is null)');
      const at = position(replayed);
      // Samples are in time order, their positions never decreasing: the newest one the replica has passed.
      for (let i = this.samples.length - 1; i >= 0; i--) {
        const sample = this.samples[i]!;
        if (sample.lsn > at) continue;
        if (sample.at > r.caughtUpTo) r.caughtUpTo = sample.at;
        break;
      }
      if (r.failed)
        this.told('a read replica answers again: reads go to it once it is within the lag', { replica: r.name });
      r.failed = false;
    } catch (error) {
      this.fail(r, error);
    }
  }
}
