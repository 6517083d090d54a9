import type { Database, DatabaseOptions } from './database.ts';
import { openEmbedded } from './embedded.ts';
import { openServer } from './server.ts';

export { type Database, DatabaseSetupError } from './database.ts';

/** Opens the database, brings its schema up to date and hands back the ORM. */
export function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (!options.url) return openEmbedded(options);
  const { poolSize = 20, timeoutMs, progress, driverWarning, notice, settingsAdvice, migrateTo } = options;
  return openServer(options.url, { poolSize, timeoutMs, progress, driverWarning, settingsAdvice, migrateTo }, notice);
}
