import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { databaseUnavailable, unavailableOr } from '../../adapters/persistence/unavailable.ts';
import { failureLevel, safeError } from '../../server/logger.ts';
import { sharedDatabase } from '../support/shared.ts';

const test = suite('log lines');

test('a database error is logged by kind and SQLSTATE, without the statement or its values', async () => {
  const db = await sharedDatabase();
  const error = await db.orm.em
    .fork()
    .getConnection()
    .execute(
      `insert into accounts (id, name, role, parent_id, created_at) values ('not-a-uuid', 'signature-key-secret-123', 'brand', null, now())`,
    )
    .catch((e: unknown) => e);
  assert.instance(error, Error);
  assert.match((error as Error).message, 'signature-key-secret-123', 'the raw error does carry the values');
  const logged = JSON.stringify(safeError(error));
  assert.not.match(logged, 'signature-key-secret-123');
  assert.not.match(logged, 'insert into');
  assert.match(logged, /SQLSTATE 22P02/);
});

test('a cause is logged on its own, by the same rule: the database away says why, without a statement', async () => {
  const db = await sharedDatabase();
  const dbError = await db.orm.em
    .fork()
    .getConnection()
    .execute(`select 'signature-key-secret-123'::uuid`)
    .catch((e: unknown) => e);
  const wrapped = databaseUnavailable(
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432', { cause: dbError }), { code: 'ECONNREFUSED' }),
  );
  const logged = safeError(wrapped) as {
    message: string;
    cause: { code: string; message: string; cause: { sqlState: string } };
  };
  assert.is(logged.message, wrapped.message, "its own message, not its causes' appended");
  assert.equal([logged.cause.code, logged.cause.message], ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432']);
  assert.is(logged.cause.cause.sqlState, '22P02');
  assert.not.match(JSON.stringify(logged), 'signature-key-secret-123');
});

test("a cause chain deeper than the serializer goes is cut, never handed to pino's serializer (which appends each cause's text)", () => {
  let chain: Error = Object.assign(new Error("insert into secrets values ('signature-key-secret-123')"), {
    sqlState: '23505',
  });
  for (let i = 0; i < 8; i++) chain = new Error(`layer ${i}`, { cause: chain });
  const logged = JSON.stringify(safeError(chain));
  assert.not.match(logged, 'signature-key-secret-123');
  assert.match(logged, 'deeper causes withheld');
});

test('a failure already said to be the database away is not wrapped again', () => {
  const once = databaseUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
  assert.is(unavailableOr(once), once);
  assert.is((unavailableOr(once.cause) as Error).cause, once.cause);
});

test('other errors keep their message and stack', () => {
  const logged = safeError(new TypeError('plain failure')) as { message: string; stack: string };
  assert.is(logged.message, 'plain failure');
  assert.match(logged.stack, 'TypeError');
});

test('an error keeps only its type, message, stack, code and cause: nothing else its thrower attached', () => {
  const url = 'postgres://postgres:pw-SECRET/part@127.0.0.1/db';
  const thrown = (() => {
    try {
      new URL(url);
    } catch (e) {
      return e;
    }
  })() as Error & { input?: string };
  assert.is(thrown.input, url, 'the raw error does carry the URL');
  const withBody = Object.assign(new Error('refused', { cause: thrown }), {
    code: 'E_REFUSED',
    body: { secret: 'pw-SECRET' },
  });
  const logged = safeError(withBody) as Record<string, unknown> & { cause: Record<string, unknown> };
  assert.equal(Object.keys(logged).sort(), ['cause', 'code', 'message', 'stack', 'type']);
  assert.equal(Object.keys(logged.cause).sort(), ['code', 'message', 'stack', 'type']);
  assert.not.match(JSON.stringify(logged), 'SECRET');
  assert.not.match(JSON.stringify(safeError({ input: url, message: 'a plain object' })), 'SECRET');
});

test('a background failure is a warning when the database is away or rolled a transaction back to break a deadlock, else an error', () => {
  const pgError = (code: string) => Object.assign(new Error('deadlock detected'), { code, severity: 'ERROR' });
  assert.is(failureLevel(pgError('40P01')), 'warn');
  assert.is(failureLevel(pgError('40001')), 'warn');
  assert.is(failureLevel(pgError('23505')), 'error');
  assert.is(failureLevel(pgError('40003')), 'error', 'whether it committed is unknown: not a moment to wait out');
  assert.is(failureLevel(new Error('a bug')), 'error');
});

test.run();
