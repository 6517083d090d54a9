import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Database, openDatabase } from '../../adapters/persistence/database/open.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// DATABASE_TIMEOUT_MS on a server bounds what the server waits for too: a statement (statement_timeout), and a
// transaction its process left open and silent (idle_in_transaction_session_timeout), whose row locks would otherwise
// hold the claims under them until TCP gives up on a host cut off mid-work.
const test = suite('the bounds a server connection carries');
let database: Database | undefined;

test.after(async () => {
  await database?.close();
});

test('a connection carries DATABASE_TIMEOUT_MS as statement and idle-in-transaction timeouts', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  database = await openDatabase({
    url: process.env.DATABASE_URL,
    pgliteDir: 'memory://',
    poolSize: 1,
    timeoutMs: 1234,
  });
  const [row] = await database.orm.em.getConnection().execute<{ statement: string; idle: string }[]>(
    `select current_setting('statement_timeout') as statement,
              current_setting('idle_in_transaction_session_timeout') as idle`,
  );
  assert.equal(row, { statement: '1234ms', idle: '1234ms' });
});

test.run();
