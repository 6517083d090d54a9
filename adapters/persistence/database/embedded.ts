import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { baseConfig } from '../../../mikro-orm.config.ts';
import { lockDataFolder } from './data-folder-lock.ts';
import {
  type Database,
  type DatabaseOptions,
  DatabaseSetupError,
  driverLog,
  migrate,
  ping,
  StatementCount,
} from './database.ts';
import { startEmbeddedUpkeep } from './embedded-upkeep.ts';

/**
 * PGlite is one PostgreSQL backend behind a socket: whatever a connection leaves in the session (prepared
 * statements above all) outlives that connection. Each new connection therefore starts from a clean session,
 * or re-preparing a named statement after a reconnect fails with 42P05.
 */
const startCleanSession =
  (statements: StatementCount) =>
  (connection: pg.Client, done: (error: Error | null, connection: pg.Client) => void) => {
    // biome-ignore lint/nursery/noFloatingPromises: pg's callback form answers nothing; the callback gets the error
    connection.query('discard all', (error: Error | null) => {
      statements.counting(connection);
      done(error, connection);
    });
  };

/**
 * How often the upkeep runs (embedded-upkeep.ts): a killed process's next start replays at most this long's writes,
 * and the queues' dead rows are cleared about this often.
 */
const UPKEEP_EVERY_MS = 60_000;

export async function openEmbedded(options: DatabaseOptions): Promise<Database> {
  // Loaded only here: the embedded database's module alone holds ~45 MB that a server deployment never needs.
  const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-socket'),
  ]);
  const inMemory = options.pgliteDir === 'memory://';
  const dir = inMemory ? options.pgliteDir : resolve(options.pgliteDir);
  let release: (() => Promise<void>) | null = null;
  // Beside the folder while a database is being created in it: a start stopped meanwhile (Ctrl-C on a first start)
  // leaves a folder that is not a database yet, which the next start empties and creates again.
  const creatingMarker = `${dir}.creating`;
  if (!inMemory) {
    await mkdir(dir, { recursive: true });
    release = await lockDataFolder(dir, options.onLockCompromised);
    if (existsSync(creatingMarker))
      for (const entry of await readdir(dir)) await rm(join(dir, entry), { recursive: true, force: true });
  }

  const progress = options.progress ?? (() => {});
  const creating = !inMemory && !existsSync(join(dir, 'PG_VERSION'));
  if (inMemory) progress('creating the embedded database in memory');
  else if (!creating) progress(`opening the embedded database in ${dir}`);
  else {
    // What is in the folder then is ours to remove (an interrupted creation) only with the marker: anything else is
    // someone's, and stays.
    if ((await readdir(dir)).length > 0) {
      await release?.();
      throw new DatabaseSetupError(
        `PGLITE_DIR: ${dir} holds files but no database; empty it, or point PGLITE_DIR at an empty or new folder`,
      );
    }
    progress(`creating the embedded database in ${dir} (a first start takes a few seconds, longer on a busy machine)`);
    await writeFile(creatingMarker, `${process.pid}\n`);
  }
  const db = await PGlite.create(inMemory ? undefined : dir);
  // A second slot lets a replacement connection in while the socket of a lost one is still being torn down;
  // the pool below never uses more than one at a time.
  const server = new PGLiteSocketServer({
    db,
    host: '127.0.0.1',
    port: 0,
    maxConnections: 2,
    idleTimeout: options.embeddedIdleTimeoutMs ?? 0,
  });
  await server.start();
  const url = `postgresql://postgres@${server.getServerConn()}/postgres`;
  // One backend: one connection, transactions one at a time. It is kept rather than dropped when idle (there is
  // nothing to save), and a replacement for a lost one starts from a clean session.
  const statements = new StatementCount();
  const orm = await MikroORM.init({
    ...baseConfig,
    clientUrl: url,
    driverOptions: driverLog(options.driverWarning),
    pool: { min: 1, max: 1, afterCreate: startCleanSession(statements) },
  });
  await migrate(orm, progress, options.migrateTo);
  if (creating) await rm(creatingMarker, { force: true });
  const stopUpkeep = startEmbeddedUpkeep(
    orm,
    options.embeddedUpkeepMs ?? UPKEEP_EVERY_MS,
    !inMemory,
    options.upkeepWarning ?? (() => {}),
  );
  return {
    orm,
    statements,
    kind: 'embedded',
    url,
    ping: () => ping(orm),
    close: async () => {
      stopUpkeep();
      await orm.close();
      await server.stop();
      await db.close();
      await release?.();
    },
  };
}
