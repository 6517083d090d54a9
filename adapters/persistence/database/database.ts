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
  /**
   * The embedded database's upkeep runs this often (a minute when absent; tests shorten it): the vacuums autovacuum
   * would make, and a checkpoint on a folder.
   */
  embeddedUpkeepMs?: number;
  /** Told why a step of the embedded database's upkeep failed (a vacuum, an analyze, a checkpoint). */
  upkeepWarning?: (message: string) => void;
  /** Told about what opening did that an operator should know (a database created). */
  notice?: (message: string) => void;
  /**
   * Told what the server's settings should be (autovacuum off); the same for every process of a start, so a cluster
   * leaves it to one of them. Not checked when absent.
   */
  settingsAdvice?: ((message: string) => void) | undefined;
  /** Told what a slow step of opening is doing (creating the embedded database, migrating), as it begins. */
  progress?: (message: string) => void;
  /** `npm run db:migrate -- --to`: the last migration to apply (all of them when absent). */
  migrateTo?: string;
  onLockCompromised?: (error: Error) => void;
  /**
   * Told what the connection pool (knex) warns of, a lost connection's `Connection Error` most of all, on its first
   * line (no stack); knex writes it to stdout itself when absent.
   */
  driverWarning?: (message: string) => void;
}

/** Knex's own logger, told to hand its warnings to `warning` instead of writing them to stdout. */
export const driverLog = (warning: ((message: string) => void) | undefined) =>
  warning
    ? {
        log: {
          warn: (message: unknown) => warning(String(message).split('\n')[0]!),
          error: (message: unknown) => warning(String(message).split('\n')[0]!),
          deprecate: (method: unknown, instead: unknown) =>
            warning(`${String(method)} is deprecated; use ${String(instead)}`),
          debug: () => {},
        },
      }
    : {};

export interface Database {
  orm: MikroORM;
  /** Every statement the ORM's connections send, counted (metrics: round trips; tests: what a request costs). */
  statements: StatementCount;
  kind: 'embedded' | 'postgresql';
  /** A connection string for plain `pg` clients (listeners, locks). */
  url: string;
  /** Whether the database answers a trivial query within a few seconds. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Brings the schema up to date (or up to the migration `to`, included), saying first how many migrations that takes
 * when there are any.
 */
export async function migrate(
  orm: MikroORM,
  progress: (message: string) => void = () => {},
  to?: string,
): Promise<void> {
  const migrator = orm.getMigrator();
  const pending = (await migrator.getPendingMigrations()).map((m) => m.name);
  const count = to === undefined ? pending.length : pending.indexOf(to) + 1;
  if (to !== undefined && count === 0) {
    const executed = (await migrator.getExecutedMigrations()).some((m) => m.name === to);
    if (!executed) throw new DatabaseSetupError(`--to ${to}: there is no such migration`);
    return;
  }
  if (count > 0) progress(`migrating the schema: ${count} migration${count === 1 ? '' : 's'} to apply`);
  await migrator.up(to === undefined ? undefined : { to });
}

/** A setting that cannot work as given: the message names it and says what to do; the process should stop. */
export class DatabaseSetupError extends Error {}

const PING_TIMEOUT_MS = 5000;

export async function ping(orm: MikroORM): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
  });
  const query = orm.em
    .getConnection()
    .execute('select 1')
    .then(
      () => true,
      () => false,
    );
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The statements sent on the ORM's connections: a count, and listeners for tests that look at which. */
export class StatementCount {
  count = 0;
  private readonly listeners = new Set<(statement: string) => void>();

  /**
   * Calls `listener` with each statement's name (a prepared statement's) or text until the answered function is called.
   */
  watch(listener: (statement: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Counts what a pooled connection sends from now on (a knex `afterCreate` hook): every statement, the ORM's and
   * those run on the driver, goes through the connection's `query`.
   */
  readonly counting = (connection: { query: (...args: never[]) => unknown }) => {
    const send = connection.query;
    connection.query = ((...args: never[]) => {
      this.count++;
      if (this.listeners.size > 0) {
        const first = args[0] as unknown as string | { name?: string; text?: string };
        const statement = typeof first === 'string' ? first : (first?.name ?? first?.text ?? '');
        for (const listener of this.listeners) listener(statement);
      }
      return send.apply(connection, args);
    }) as typeof connection.query;
  };
}
