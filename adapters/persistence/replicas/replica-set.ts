import pg from 'pg';

/** How often the primary's WAL position, and each replica's replay position, are read. */
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
  /** How far behind the primary its answers may be (null until a check placed it). */
  lagMs: number | null;
  /** Whether reads go to it now. */
  usable: boolean;
}

interface Replica {
  name: string;
  pool: pg.Pool;
  /** The time of the newest primary sample it has replayed past (null: none). */
  caughtUpTo: number | null;
  /** Its last check failed, or a read found it away: left until a check answers. */
  failed: boolean;
  checking: boolean;
}

/** Where the reads of one unit of work go: the first read picks, the others follow (one source per request). */
export interface ReadSession {
  read<T>(work: (client: pg.PoolClient) => Promise<T>, onPrimary: () => Promise<T>): Promise<T>;
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

class NoAnswer extends Error {}

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new NoAnswer(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Work on a pooled connection, bounded: a connection that does not answer in time is closed, never given back. */
async function bounded<T>(pool: pg.Pool, ms: number, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const connecting = pool.connect();
  let client: pg.PoolClient;
  try {
    client = await within(connecting, ms);
  } catch (error) {
    connecting.then(
      (late) => late.release(true),
      () => {},
    ); // one that comes too late is closed
    throw error;
  }
  try {
    const answer = await within(work(client), ms);
    client.release();
    return answer;
  } catch (error) {
    client.release(error instanceof Error ? error : true);
    throw error;
  }
}

/** A refused or broken connection says the replica is away; a slow read or an SQL error says nothing of it. */
const saysAway = (error: unknown) =>
  !(error instanceof NoAnswer) && !/^[0-9A-Z]{5}$/.test(String((error as { code?: unknown }).code));

/**
 * The streaming replicas of CONTRACT §12 and how far each lags. The lag is measured against the primary's own WAL
 * position, not the replica's last replayed commit time (wrong on a quiet primary): every CHECK_EVERY_MS the primary's
 * write position is sampled, and a replica that has replayed past a sample holds everything the primary had committed
 * when it was taken. A sample is dated `asyncSlackMs` earlier than it was read: a commit without synchronous_commit
 * (the delivery records) is visible before its WAL is written, for up to three wal_writer_delay. A replica's lag is
 * the age of the newest sample it has passed, so it keeps growing while the replica stops or hangs, and it is left as
 * soon as that passes `maxLagMs`. The clock is monotonic.
 */
export class ReplicaSet {
  private readonly replicas: Replica[];
  private readonly primary: pg.Pool;
  private samples: { at: number; lsn: bigint }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sampling = false;
  private primaryAway = false;
  private turn = 0;
  private readonly now: () => number;

  constructor(
    primaryUrl: string,
    replicaUrls: readonly string[],
    private readonly options: {
      maxLagMs: number;
      /** Connections to each replica (as to the primary: DATABASE_POOL_SIZE). */
      poolSize: number;
      /** A §12 read was answered by `database` (`primary`, or a replica's name). */
      served?: (database: string) => void;
      /** A replica, or the primary's sampling, failed or answers again. */
      told?: (message: string, fields: Record<string, unknown>) => void;
      now?: () => number;
    },
  ) {
    this.now = options.now ?? (() => performance.now());
    // A connection lost while idle (the pool's 'error') or while lent out between statements (the client's own, which
    // a pool does not listen on while it is lent): the statement it runs next fails, and the next check says so.
    const quiet = (pool: pg.Pool) => pool.on('error', () => {}).on('connect', (client) => client.on('error', () => {}));
    this.primary = quiet(new pg.Pool({ connectionString: primaryUrl, max: 1, keepAlive: true }));
    this.replicas = replicaUrls.map((url) => ({
      name: nameOf(url),
      pool: quiet(new pg.Pool({ connectionString: url, max: options.poolSize, keepAlive: true })),
      caughtUpTo: null,
      failed: false,
      checking: false,
    }));
  }

  start(): void {
    this.timer ??= setInterval(() => this.check(), CHECK_EVERY_MS).unref();
    this.check();
  }

  views(): ReplicaView[] {
    const now = this.now();
    return this.replicas.map((r) => ({
      name: r.name,
      lagMs: r.caughtUpTo === null ? null : Math.max(0, Math.round(now - r.caughtUpTo)),
      usable: this.usable(r, now),
    }));
  }

  /** The reads of one unit of work: on the replica the first of them picked, while it serves them, else the primary. */
  session(): ReadSession {
    let chosen: Replica | 'primary' | undefined;
    return {
      read: async (work, onPrimary) => {
        if (chosen === undefined) {
          const usable = this.replicas.filter((r) => this.usable(r, this.now()));
          chosen = usable[this.turn++ % Math.max(usable.length, 1)] ?? 'primary';
        }
        if (chosen !== 'primary') {
          const replica = chosen;
          try {
            const answer = await bounded(replica.pool, READ_WITHIN_MS, work);
            this.options.served?.(replica.name);
            return answer;
          } catch (error) {
            if (saysAway(error)) this.fail(replica, error);
            chosen = 'primary'; // the rest of the request too: a fresher source never goes back to an older one
          }
        }
        const answer = await onPrimary();
        this.options.served?.('primary');
        return answer;
      },
    };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([this.primary, ...this.replicas.map((r) => r.pool)].map((pool) => pool.end().catch(() => {})));
  }

  private usable(r: Replica, now: number): boolean {
    return !r.failed && r.caughtUpTo !== null && now - r.caughtUpTo <= this.options.maxLagMs;
  }

  private fail(r: Replica, error: unknown) {
    if (!r.failed)
      this.options.told?.('a read replica failed: its reads go to the primary', { replica: r.name, err: error });
    r.failed = true;
  }

  /** A sample of the primary, and a check of each replica, each on its own: one that hangs holds up no other. */
  private check(): void {
    if (!this.sampling) {
      this.sampling = true;
      void this.sample().finally(() => {
        this.sampling = false;
      });
    }
    for (const r of this.replicas)
      if (!r.checking) {
        r.checking = true;
        void this.checkReplica(r).finally(() => {
          r.checking = false;
        });
      }
  }

  private async sample(): Promise<void> {
    const read = this.now();
    try {
      const { rows } = await bounded(this.primary, ANSWER_WITHIN_MS, (client) =>
        client.query<{ lsn: string; slack: number }>(
          `select pg_current_wal_lsn()::text as lsn,
             3 * (select setting::int from pg_settings where name = 'wal_writer_delay') as slack`,
        ),
      );
      this.samples.push({ at: read - rows[0]!.slack, lsn: position(rows[0]!.lsn) });
      this.samples = this.samples.filter((s) => s.at >= read - SAMPLES_KEPT_MS);
      if (this.primaryAway) this.options.told?.('read replicas: the primary answers again', {});
      this.primaryAway = false;
    } catch (error) {
      // No new sample: every replica's lag grows until the primary answers again.
      if (!this.primaryAway)
        this.options.told?.("read replicas: the primary's WAL position cannot be read", { err: error });
      this.primaryAway = true;
    }
  }

  private async checkReplica(r: Replica): Promise<void> {
    try {
      const { rows } = await bounded(r.pool, ANSWER_WITHIN_MS, (client) =>
        client.query<{ lsn: string | null }>('select pg_last_wal_replay_lsn()::text as lsn'),
      );
      const replayed = rows[0]?.lsn;
      if (!replayed) throw new Error('not a streaming replica (pg_last_wal_replay_lsn() is null)');
      const at = position(replayed);
      // Samples are in time order, their positions never decreasing: the newest one it has passed, found afresh each
      // time (a URL that comes to reach another, older server is judged by what that one has).
      let reached: number | null = null;
      for (let i = this.samples.length - 1; i >= 0 && reached === null; i--)
        if (this.samples[i]!.lsn <= at) reached = this.samples[i]!.at;
      r.caughtUpTo = reached;
      if (r.failed) this.options.told?.('a read replica answers again', { replica: r.name });
      r.failed = false;
    } catch (error) {
      this.fail(r, error);
    }
  }
}
