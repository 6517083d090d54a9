import type { Database, DatabaseOptions } from './database.ts';
import { openEmbedded } from './embedded.ts';
import { openServer } from './server.ts';

export { DatabaseSetupError, type Database } from './database.ts';

/** Opens the database, brings its schema up to date and hands back the ORM. */
export function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.url ? openServer(options.url, {
    poolSize: options.poolSize ?? 20, timeoutMs: options.timeoutMs, progress: options.progress, driverWarning: options.driverWarning,
  }, options.notice) : openEmbedded(options);
}
