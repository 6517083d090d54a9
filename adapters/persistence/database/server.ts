import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { baseConfig } from '../../../mikro-orm.config.ts';
import { type Database, DatabaseSetupError, driverLog, migrate, ping, StatementCount } from './database.ts';

export async function openServer(
  url: string,
  {
    poolSize,
    timeoutMs,
    progress,
    driverWarning,
    settingsAdvice,
    migrateTo,
  }: {
    poolSize: number;
    timeoutMs?: number | undefined;
    progress?: ((message: string) => void) | undefined;
    driverWarning?: ((message: string) => void) | undefined;
    settingsAdvice?: ((message: string) => void) | undefined;
    migrateTo?: string | undefined;
  },
  notice: (message: string) => void = () => {},
): Promise<Database> {
  await ensureDatabase(url, notice);
  await migrateExclusively(url, async () => {
    const orm = await MikroORM.init({ ...baseConfig, clientUrl: url, pool: { min: 0, max: 1 } });
    try {
      await migrate(orm, progress, migrateTo);
    } finally {
      await orm.close();
    }
  });
  const statements = new StatementCount();
  const orm = await MikroORM.init({
    ...baseConfig,
    clientUrl: url,
    driverOptions: { ...bounded(timeoutMs), ...driverLog(driverWarning) },
    pool: {
      min: 0,
      max: poolSize,
      afterCreate: (connection: pg.Client, done: (error: Error | null, connection: pg.Client) => void) => {
        statements.counting(connection);
        done(null, connection);
      },
    },
  });
  // The command and delivery queues update every row they carry: without autovacuum their dead rows pile up until
  // every claim steps over them (claims ten to fifty times slower after a few thousand commands, in bench/commands).
  const [setting] = settingsAdvice
    ? await orm.em.getConnection().execute<{ autovacuum: string }[]>('show autovacuum')
    : [];
  if (setting?.autovacuum === 'off')
    settingsAdvice?.(
      'autovacuum is off on this PostgreSQL server: the command and delivery queues will slow down as their tables bloat; turn it on, or VACUUM them regularly',
    );
  return { orm, statements, kind: 'postgresql', url, ping: () => ping(orm), close: () => orm.close() };
}

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Nothing waits on the server without end: a slow statement is cancelled by the server (statement_timeout, which
 * leaves the connection and its transaction in a state the rollback cleans up), and a connection that does not open
 * or a pool with no connection free is given up. The failure is a 503 to the caller (unavailable.ts) and a retry for
 * the workers. No client-side read timeout: pg leaves a timed-out query running on a connection it puts back in the
 * pool, where the next borrower would inherit its transaction. 0 leaves statement_timeout out (PgBouncer refuses it
 * as a startup parameter); the connection and pool waits then keep 10 s.
 */
function bounded(timeoutMs: number | undefined) {
  if (timeoutMs === undefined) return {};
  const waitMs = timeoutMs || 10_000;
  return {
    connection: {
      // A transaction whose process went silent (a host cut off mid-work) holds its row locks, and the claims under
      // them, until the server gives up on it: after the same bound, not TCP's two hours.
      ...(timeoutMs > 0 && { statement_timeout: timeoutMs, idle_in_transaction_session_timeout: timeoutMs }),
      connectionTimeoutMillis: Math.min(waitMs, 5000),
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    },
    acquireConnectionTimeout: waitMs,
  };
}

/**
 * Connects once before anything else, so that a wrong DATABASE_URL ends in one sentence that says what to change.
 * A database that does not exist yet is created when the server lets this user do it.
 */
async function ensureDatabase(url: string, notice: (message: string) => void) {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  // The driver would pick the database named after the user (often `postgres`) and the schema would land there.
  if (!name) {
    const example = `${target.protocol}//${target.username ? `${target.username}@` : ''}${target.host}/pbi`;
    throw new DatabaseSetupError(`DATABASE_URL names no database: add its name to the path, e.g. ${example}`);
  }
  try {
    await connectOnce(url);
    return;
  } catch (error) {
    if ((error as { code?: string }).code !== '3D000') throw explain(error, target);
  }
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({
    connectionString: maintenance.toString(),
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  try {
    await client.connect();
    await client.query(`create database ${pg.escapeIdentifier(name)}`);
    notice(`database "${name}" did not exist on ${target.host}: created it`);
  } catch (error) {
    const code = (error as { code?: string }).code;
    // Another process created it meanwhile: 42P04, or 23505 when both inserted into pg_database at the same moment.
    if (code === '42P04' || code === '23505') return;
    if (code === '42501' || code === '3D000') {
      throw new DatabaseSetupError(
        `DATABASE_URL names the database "${name}", which does not exist on ${target.host}, and this user may not create it: ` +
          `create it (createdb ${name}) or name an existing database.`,
      );
    }
    throw explain(error, target);
  } finally {
    await client.end().catch(() => {});
  }
}

async function connectOnce(url: string) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
  } finally {
    await client.end().catch(() => {});
  }
}

function explain(error: unknown, target: URL): Error {
  const code = (error as { code?: string }).code ?? '';
  const where = target.host || 'the server';
  const user = decodeURIComponent(target.username) || 'the default user';
  if (
    ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET'].includes(code) ||
    /timeout/i.test(String(error))
  ) {
    return new DatabaseSetupError(
      `DATABASE_URL: no PostgreSQL server answers at ${where} (${code || 'timeout'}): start it, or correct the host and port; ` +
        'unset DATABASE_URL to use the embedded database.',
    );
  }
  if (code === '28P01' || code === '28000') {
    return new DatabaseSetupError(
      `DATABASE_URL: the server at ${where} refused the login of ${user} (${(error as Error).message}): correct the user or password.`,
    );
  }
  // Anything else on the first connection (not PostgreSQL at that port, an SSL mismatch, a bad URL) is the setting too.
  return new DatabaseSetupError(
    `DATABASE_URL: could not connect to PostgreSQL at ${where} (${String((error as Error).message ?? error).split('\n')[0]}): ` +
      'check the host, the port and the sslmode.',
  );
}

// Several processes may start at once against one server: only one of them migrates at a time.
async function migrateExclusively(url: string, migrate: () => Promise<void>) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`select pg_advisory_lock(hashtext('partner-brand-api:migrations'))`);
    await migrate();
  } finally {
    await client.end();
  }
}
