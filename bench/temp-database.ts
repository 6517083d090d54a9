// A database of a bench's own on its temporary PostgreSQL server, migrated as a service's start migrates it.
import pg from 'pg';
import { openDatabase } from '../adapters/persistence/database/open.ts';
import type { TempPostgres } from '../tests/support/temp-postgres.ts';

/** Creates `name` on `server` and migrates it (up to `migrateTo` when given); answers its URL. */
export async function migratedDatabase(server: TempPostgres, name: string, migrateTo?: string): Promise<string> {
  const admin = new pg.Client({ connectionString: server.url('postgres') });
  await admin.connect();
  try {
    await admin.query(`create database ${pg.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  const url = server.url(name);
  await (await openDatabase({ url, pgliteDir: '', ...(migrateTo ? { migrateTo } : {}) })).close();
  return url;
}

/** How long `work` took, in milliseconds, as the client sees it. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}
