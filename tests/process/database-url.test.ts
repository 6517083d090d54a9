import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startService } from '../support/process.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

const test = suite('a DATABASE_URL that cannot work as given');
const server = process.env.DATABASE_URL; // set on the PostgreSQL pass of the suite

function assertOneClearLine(output: string, pattern: RegExp) {
  assert.match(output, pattern);
  assert.match(output, 'DATABASE_URL');
  assert.not.match(output, /\n\s+at /, 'no stack trace');
}

test('a password with an unencoded / # or ?: refused in one line that repeats no part of it, exit code 1', async () => {
  for (const password of ['pw-SECRET/tail-PART', 'pw-SECRET#tail-PART', 'pw-SECRET?tail-PART', '12/tail-PART']) {
    const service = startService({ DATABASE_URL: `postgres://postgres:${password}@127.0.0.1:5432/partner_api` });
    assert.is(await service.exited, 1);
    const output = service.output();
    assertOneClearLine(output, /percent-encode reserved characters/);
    assert.not.match(output, 'SECRET', password);
    assert.not.match(output, 'tail-PART', password);
  }
});

test('no server at the address: one line naming DATABASE_URL, exit code 1', async () => {
  const service = startService({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/partner_api' });
  assert.is(await service.exited, 1);
  assertOneClearLine(service.output(), /no PostgreSQL server answers at 127\.0\.0\.1:1/);
});

test('something that is not PostgreSQL at the address: one line naming DATABASE_URL, exit code 1', async () => {
  const { createServer } = await import('node:http');
  const notPostgres = createServer((_req, res) => res.end('hello'));
  await new Promise<void>((resolve) => notPostgres.listen(0, '127.0.0.1', resolve));
  const port = (notPostgres.address() as { port: number }).port;
  try {
    const service = startService({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/partner_api` });
    assert.is(await service.exited, 1);
    assertOneClearLine(service.output(), /could not connect to PostgreSQL at 127\.0\.0\.1:\d+/);
  } finally {
    notPostgres.closeAllConnections();
    notPostgres.close();
  }
});

const withPath = (database: string, user?: string) => {
  const url = new URL(server!);
  url.pathname = `/${database}`;
  if (user) url.username = user;
  return url.toString();
};

test('a database that does not exist yet is created, and the log says so', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const name = `pbi_created_${Date.now()}_${process.pid}`;
  const service = startService({ DATABASE_URL: withPath(name), SERVICE_ROLE: 'api' });
  try {
    const port = await service.listening;
    assert.is((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
    assert.match(service.output(), `database \\"${name}\\" did not exist`);
  } finally {
    await service.stop();
    const admin = new pg.Client({ connectionString: withPath('postgres') });
    await admin.connect();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
});

test('two processes starting at once on a database that does not exist yet: both start (one creates it)', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  // CREATE DATABASE racing another fails with 42P04 or, when both insert into pg_database at once, 23505: either
  // means that the other process made it. Three rounds: the race goes one way or the other.
  for (let round = 0; round < 3; round++) {
    const name = `pbi_race_${Date.now()}_${process.pid}_${round}`;
    const both = [
      startService({ DATABASE_URL: withPath(name), SERVICE_ROLE: 'api' }),
      startService({ DATABASE_URL: withPath(name), SERVICE_ROLE: 'worker' }),
    ];
    try {
      const ports = await Promise.all(both.map((s) => s.listening.catch((error: Error) => error.message)));
      for (const port of ports) assert.type(port, 'number', String(port).slice(0, 500));
    } finally {
      await Promise.all(both.map((s) => s.stop()));
      const admin = new pg.Client({ connectionString: withPath('postgres') });
      await admin.connect();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  }
});

test('a login the server refuses: one line naming DATABASE_URL, exit code 1', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const service = startService({ DATABASE_URL: withPath('postgres', 'no_such_role_pbi') });
  assert.is(await service.exited, 1);
  assertOneClearLine(service.output(), /refused the login of no_such_role_pbi/);
});

test.run();
