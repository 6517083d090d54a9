import type { MikroORM } from '@mikro-orm/postgresql';

export interface DatabaseOptions {
  /** A PostgreSQL server; absent means the embedded database in `pgliteDir`. */
  url?: string;
  /** Data folder of the embedded database, or `memory://`. */
  pgliteDir: string;
  /** Connections per process on a server. */
  poolSize?: number;
  /**
   * On a server: the longest a statement runs (statement_timeout; 0: none) and a connection takes to open or to come
   * free in the pool; no bounds at all when absent (tools that load data in bulk).
   */
  timeoutMs?: number;
  /**
   * Test-only: the embedded server closes connections idle this long (0: never), so that tests can show the
   * service reconnecting after a lost connection.
   */
  embeddedIdleTimeoutMs?: number;
  /** The embedded database on a folder checkpoints this often (a minute when absent; tests shorten it). */
  embeddedCheckpointMs?: number;
  /** Told about what opening did that an operator should know (a database created). */
  notice?: (message: string) => void;
  onLockCompromised?: (error: Error) => void;
}

export interface Database {
  orm: MikroORM;
  kind: 'embedded' | 'postgresql';
  /** A connection string for plain `pg` clients (listeners, locks). */
  url: string;
  /** Whether the database answers a trivial query within a few seconds. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** A setting that cannot work as given: the message names it and says what to do; the process should stop. */
export class DatabaseSetupError extends Error {}

const PING_TIMEOUT_MS = 5000;

export async function ping(orm: MikroORM): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS); });
  const query = orm.em.getConnection().execute('select 1').then(() => true, () => false);
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
