import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { baseConfig } from '../../mikro-orm.config.ts';

export interface DatabaseOptions {
  /** A PostgreSQL server; absent means the embedded database in `pgliteDir`. */
  url?: string;
  /** Data folder of the embedded database, or `memory://`. */
  pgliteDir: string;
  /** Connections per process on a server. */
  poolSize?: number;
  onLockCompromised?: (error: Error) => void;
}

export interface Database {
  orm: MikroORM;
  kind: 'embedded' | 'postgresql';
  /** A connection string for plain `pg` clients (streaming reads, locks). */
  url: string;
  /** Whether the database answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export class DatabaseLockedError extends Error {
  constructor(readonly dir: string) {
    super(`The embedded database in ${dir} is in use by another process. The embedded database serves one process only: `
      + 'stop the other process, choose another PGLITE_DIR, or set DATABASE_URL to share a PostgreSQL server.');
  }
}

/** Opens the database, brings its schema up to date and hands back the ORM. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.url ? openServer(options.url, options.poolSize ?? 10) : openEmbedded(options);
}

async function openServer(url: string, poolSize: number): Promise<Database> {
  await migrateExclusively(url, async () => {
    const orm = await MikroORM.init({ ...baseConfig, clientUrl: url, pool: { min: 0, max: 1 } });
    try {
      await orm.getMigrator().up();
    } finally {
      await orm.close();
    }
  });
  const orm = await MikroORM.init({ ...baseConfig, clientUrl: url, pool: { min: 0, max: poolSize } });
  return { orm, kind: 'postgresql', url, ping: () => ping(orm), close: () => orm.close() };
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

async function openEmbedded(options: DatabaseOptions): Promise<Database> {
  // Loaded only here: the embedded database's module alone holds ~45 MB that a server deployment never needs.
  const [{ PGlite }, { PGLiteSocketServer }, { default: lockfile }] = await Promise.all([
    import('@electric-sql/pglite'), import('@electric-sql/pglite-socket'), import('proper-lockfile'),
  ]);
  const inMemory = options.pgliteDir === 'memory://';
  const dir = inMemory ? options.pgliteDir : resolve(options.pgliteDir);
  let release: (() => Promise<void>) | null = null;
  if (!inMemory) {
    await mkdir(dir, { recursive: true });
    // Two processes on one data folder lose writes silently: the second one must refuse to start.
    release = await lockfile
      .lock(dir, {
        lockfilePath: `${dir}.lock`,
        stale: 10_000,
        update: 2_000,
        onCompromised: options.onLockCompromised ?? ((error) => { throw error; }),
      })
      .catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ELOCKED') throw new DatabaseLockedError(dir);
        throw error;
      });
  }

  const db = await PGlite.create(inMemory ? undefined : dir);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
  await server.start();
  const url = `postgresql://postgres@${server.getServerConn()}/postgres`;
  // The embedded server serves one session: one connection, transactions one at a time.
  const orm = await MikroORM.init({ ...baseConfig, clientUrl: url, pool: { min: 0, max: 1 } });
  await orm.getMigrator().up();
  return {
    orm,
    kind: 'embedded',
    url,
    ping: () => ping(orm),
    close: async () => {
      await orm.close();
      await server.stop();
      await db.close();
      await release?.();
    },
  };
}

async function ping(orm: MikroORM): Promise<boolean> {
  try {
    await orm.em.getConnection().execute('select 1');
    return true;
  } catch {
    return false;
  }
}
