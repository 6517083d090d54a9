import { type Database, openDatabase } from '../../adapters/persistence/database/open.ts';

// One database for the whole run: the embedded one in memory, or the server named by DATABASE_URL.
// Suites keep apart by creating their own accounts, ids and e-mail addresses.
let shared: Promise<Database> | null = null;
const cleanups: (() => Promise<void>)[] = [];

export function sharedDatabase(): Promise<Database> {
  shared ??= openDatabase({ url: process.env.DATABASE_URL, pgliteDir: 'memory://' });
  return shared;
}

/** Registers something to close after the last suite (apps built on the shared database, servers). */
export function closeAtEnd(cleanup: () => Promise<void>) {
  cleanups.push(cleanup);
}

export async function closeShared() {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  if (shared) await (await shared).close();
  shared = null;
}
