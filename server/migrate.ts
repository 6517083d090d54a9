// `npm run db:migrate`: brings the schema of the configured database up to date, then exits.
import { DatabaseSetupError, openDatabase } from '../adapters/persistence/database/open.ts';
import { loadConfig } from './config.ts';
import { embeddedFolderLine } from './console-lines.ts';

const config = loadConfig();
const folder = embeddedFolderLine(config);
if (folder) console.log(`migrating ${folder}`);
const database = await openDatabase({
  url: config.databaseUrl,
  pgliteDir: config.pgliteDir,
  notice: console.log,
}).catch((error: unknown) => {
  if (!(error instanceof DatabaseSetupError)) throw error;
  console.error(error.message);
  process.exit(1);
});
const executed = await database.orm.getMigrator().getExecutedMigrations();
console.log(`schema up to date (${database.kind}): ${executed.map((m) => m.name).join(', ')}`);
await database.close();
