// `npm run db:migrate`: brings the schema of the configured database up to date, then exits.
import { openDatabase } from '../adapters/persistence/database.ts';
import { loadConfig } from './config.ts';

const config = loadConfig();
const database = await openDatabase({ url: config.databaseUrl, pgliteDir: config.pgliteDir });
const executed = await database.orm.getMigrator().getExecutedMigrations();
console.log(`schema up to date (${database.kind}): ${executed.map((m) => m.name).join(', ')}`);
await database.close();
