// `npm run db:migrate`: brings the schema of the configured database up to date, then exits.
//   --to <migration>        applies the migrations up to that one, included, and no further
//   --prepare-partitions    on PostgreSQL, before the history is partitioned: builds its new keys and checks its rows
//                           without blocking anyone, so that the migration that partitions it only swaps tables
//                           (docs/operators.md, "Partitioning a live deployment's history")
import { parseArgs } from 'node:util';
import pg from 'pg';
import { DatabaseSetupError, openDatabase } from '../adapters/persistence/database/open.ts';
import {
  HISTORY_TABLES,
  INVALID_INDEXES,
  legacyBoundSql,
  PREPARE_BOUND,
  PREPARE_KEYS,
} from '../adapters/persistence/migrations/Migration20261130000000_history_partitions.ts';
import { loadConfig } from './config.ts';
import { embeddedFolderLine } from './console-lines.ts';

const BEFORE_PARTITIONS = 'Migration20261129140000_sequence_round_waiting';
const PARTITIONS = 'Migration20261130000000_history_partitions';
/** How long a prepared deployment has to run the migration that partitions its history. */
const PREPARED_FOR_DAYS = 7;

const fail = (message: string): never => {
  console.error(message);
  process.exit(1);
};
const { values: args } = (() => {
  try {
    return parseArgs({ options: { to: { type: 'string' }, 'prepare-partitions': { type: 'boolean' } } });
  } catch (error) {
    return fail(`db:migrate: ${(error as Error).message}`);
  }
})();
const config = loadConfig();
if (args['prepare-partitions'] && !config.databaseUrl) {
  fail('--prepare-partitions is for a PostgreSQL server (DATABASE_URL); the embedded database migrates in place');
}
const folder = embeddedFolderLine(config);
if (folder) console.log(`migrating ${folder}`);
const database = await openDatabase({
  url: config.databaseUrl,
  pgliteDir: config.pgliteDir,
  notice: console.log,
  progress: console.log,
  migrateTo: args['prepare-partitions'] ? BEFORE_PARTITIONS : args.to,
}).catch((error: unknown) => {
  if (!(error instanceof DatabaseSetupError)) throw error;
  return fail(error.message);
});
const executed = (await database.orm.getMigrator().getExecutedMigrations()).map((m) => m.name);
if (args['prepare-partitions']) {
  if (executed.includes(PARTITIONS)) console.log('the history is partitioned already: nothing to prepare');
  else await preparePartitions(database.url);
} else console.log(`schema up to date (${database.kind}): ${executed.join(', ')}`);
await database.close();

// Each statement on its own, outside any transaction (`concurrently` needs that): writes go on meanwhile.
async function preparePartitions(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // A statement that locks a table waits 5 s at most (a long transaction holding it): run the command again. Not
    // an index built concurrently, which waits for older transactions to end, as long as they last.
    const lockTimeout = (statement: string) =>
      client.query(`set lock_timeout = '${statement.includes('concurrently') ? 0 : '5s'}'`);
    // An index a stopped run left half-built (invalid) is dropped first: `if not exists` would keep it.
    for (const { name } of (await client.query<{ name: string }>(INVALID_INDEXES)).rows) {
      await lockTimeout('concurrently');
      await client.query(`drop index concurrently ${name}`);
      console.log(`  dropped the index ${name}, left invalid by an earlier run`);
    }
    const { rows } = await client.query<{ ms: string }>(legacyBoundSql(PREPARED_FOR_DAYS));
    const bound = new Date(Number(rows[0]!.ms)).toISOString();
    console.log(`preparing the history's partitions: rows before ${bound} stay in one partition of the past`);
    for (const statement of [...PREPARE_KEYS(true), ...HISTORY_TABLES.flatMap((t) => PREPARE_BOUND(t, bound))]) {
      const started = performance.now();
      await lockTimeout(statement);
      await client.query(statement);
      console.log(`  ${statement.split(' on ')[0]} (${Math.round(performance.now() - started)} ms)`);
    }
    console.log(`prepared: run npm run db:migrate (or start the new version) before ${bound}; until then, history`);
    console.log('  written past that time is refused');
  } finally {
    await client.end();
  }
}
