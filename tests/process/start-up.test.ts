import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { startService } from '../support/process.ts';
import { freePort } from '../support/temp-postgres.ts';

// The port is bound before anything else starts, and settings that cannot work stop the process with one line.
const test = suite('start-up');
const server = process.env.DATABASE_URL; // set on the PostgreSQL pass of the suite
const dirs: string[] = [];
const servers: Server[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'pbi-start-'));
  dirs.push(d);
  return d;
};
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const s of servers) s.close();
});

/** A TCP server on a port of its own (all addresses, as the service listens) that does `onConnection`. */
async function tcpServer(onConnection: (socket: import('node:net').Socket) => void = () => {}): Promise<number> {
  const s = createServer(onConnection);
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, resolve));
  return (s.address() as { port: number }).port;
}

function assertOneClearLine(output: string, pattern: RegExp) {
  assert.match(output, pattern);
  assert.not.match(output, /\n\s+at /, 'no stack trace');
  assert.not.match(output, /"level":(50|60)/, 'no error or fatal log line');
}

/** "At once": the process ends long before a database would be open and migrated, let alone a lease run out. */
async function exitsAtOnce(service: ReturnType<typeof startService>) {
  const started = Date.now();
  const code = await service.exited;
  assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms to exit`);
  return code;
}

test('PORT in use: one line naming PORT and the fix, exit code 1, before the database is opened', async () => {
  const port = await tcpServer();
  const dataDir = tempDir();
  const service = startService({ PORT: String(port), PGLITE_DIR: join(dataDir, 'pglite'), DATA_DIR: dataDir });
  assert.is(await exitsAtOnce(service), 1, service.output());
  assertOneClearLine(
    service.output(),
    new RegExp(`PORT ${port} is in use by another process: stop it, or set PORT to a free port`),
  );
  assert.not.ok(existsSync(join(dataDir, 'pglite')), 'the embedded database was opened');
});

if (server) {
  test('PORT in use on PostgreSQL: the worker refuses to start with one line, and a command waiting stays unclaimed', async () => {
    const app = await appWithMailbox(); // an API in this process: it runs no executor
    const brand = await integrator(app, 'brand');
    const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
    const cid = randomUUID();
    const sent = await app.http
      .post('/v3/commands')
      .set('authorization', `Bearer ${brand.accessToken}`)
      .send({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: apiId });
    assert.is(sent.status, 202);
    const claimOf = async () =>
      (
        await app.database.orm.em
          .fork()
          .getConnection()
          .execute('select status, attempts, lease_until, claim_token from commands where account_id = ? and cid = ?', [
            brand.accountId,
            cid,
          ])
      )[0];
    const before = await claimOf();
    assert.equal(before, { status: 'accepted', attempts: 0, lease_until: null, claim_token: null });

    const port = await tcpServer();
    const service = startService({ PORT: String(port), DATABASE_URL: server, SERVICE_ROLE: 'worker' });
    assert.is(await exitsAtOnce(service), 1, service.output());
    assertOneClearLine(service.output(), new RegExp(`PORT ${port} is in use by another process`));
    assert.equal(await claimOf(), before, 'the command was claimed by a process that then failed to start');
  });
}

test('while the database opens, the port answers: /healthz 200, /readyz 503, anything else 503 problem+json with Retry-After', async () => {
  // A "database" that takes connections and never answers: opening waits for the connection timeout (10 s).
  const silent = await tcpServer();
  const port = await freePort();
  const service = startService({
    PORT: String(port),
    DATABASE_URL: `postgres://postgres@127.0.0.1:${silent}/partner_api`,
  });
  const base = `http://127.0.0.1:${port}`;
  let health: Response | undefined;
  while (!health && service.child.exitCode === null) {
    health = await fetch(`${base}/healthz`).catch(() => undefined);
    if (!health) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(health, `the port never answered:\n${service.output()}`);
  assert.is(health.status, 200);
  assert.equal(await health.json(), { status: 'ok' });
  const ready = await fetch(`${base}/readyz`);
  assert.is(ready.status, 503);
  const command = await fetch(`${base}/v3/commands`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  assert.is(command.status, 503);
  assert.match(command.headers.get('content-type') ?? '', 'application/problem+json');
  assert.ok(Number(command.headers.get('retry-after')) >= 1, 'no Retry-After');
  const problem = (await command.json()) as { status: number; code: string; detail: string };
  assert.is(problem.status, 503);
  assert.is(problem.code, 'SERVICE_UNAVAILABLE');
  assert.match(problem.detail, /starting/);
  assert.is(await service.exited, 1);
  assertOneClearLine(service.output(), /DATABASE_URL: no PostgreSQL server answers/);
});

for (const slash of ['', '/']) {
  test(`a DATABASE_URL without a database name ("…:5432${slash}"): one line naming DATABASE_URL and the fix, exit code 1`, async () => {
    // No server at the address: the process must refuse before connecting (on a server, it would otherwise open the
    // database named after the user, and create its tables there).
    const service = startService({ DATABASE_URL: `postgres://postgres@127.0.0.1:1${slash}` });
    assert.is(await service.exited, 1, service.output());
    assertOneClearLine(
      service.output(),
      /DATABASE_URL names no database: add its name to the path, e\.g\. postgres:\/\/postgres@127\.0\.0\.1:1\/pbi/,
    );
  });
}

test('a first start stopped while it creates the embedded database leaves nothing that changes the next', async () => {
  const dataDir = tempDir();
  const first = startService({ DATA_DIR: dataDir });
  for (const deadline = Date.now() + 60_000; !first.output().includes('creating the embedded database'); ) {
    assert.ok(Date.now() < deadline && first.child.exitCode === null, first.output());
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await new Promise((resolve) => setTimeout(resolve, 300)); // part of the way into the creation
  first.child.kill('SIGINT'); // Ctrl-C: no handler is set yet, so it ends where it stands
  await first.exited;
  assert.ok(existsSync(join(dataDir, 'pglite.creating')), 'the creation was under way');

  const next = startService({ DATA_DIR: dataDir });
  const port = await next.listening;
  assert.match(next.output(), `creating the embedded database in ${join(dataDir, 'pglite')}`);
  assert.is((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
  assert.not.ok(existsSync(join(dataDir, 'pglite.creating')), 'the marker is gone once the database is made');
  assert.is(await next.stop('SIGTERM'), 0);
});

test('PGLITE_DIR on a folder that holds files but no database: refused in one line, the files left alone', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'notes.txt'), 'not a database');
  const service = startService({ PGLITE_DIR: dir });
  assert.is(await exitsAtOnce(service), 1);
  assertOneClearLine(service.output(), /PGLITE_DIR: \S+ holds files but no database/);
  assert.is(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'not a database');
  assert.not.ok(existsSync(`${dir}.creating`));
});

test.run();
