import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startService } from '../support/process.ts';

const test = suite('the service process');
const ADMIN = 'process-admin-token-0123456789';
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'pbi-'));
  dirs.push(d);
  return d;
};
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const adminCall = (port: number, name: string, input: unknown) =>
  fetch(`http://127.0.0.1:${port}/trpc/admin.${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify(input),
  });

for (const [env, setting] of [
  [{ PORT: 'abc' }, 'PORT'],
  [{ JWT_SECRET: 'too-short' }, 'JWT_SECRET'],
  [{ WEBHOOK_RETRY_SCHEDULE: '5s,soon' }, 'WEBHOOK_RETRY_SCHEDULE'],
  [{ SERVICE_ROLE: 'worker' }, 'SERVICE_ROLE'],
  [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
  [
    { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
    'OTEL_EXPORTER_OTLP_PROTOCOL',
  ],
  [{ OTEL_EXPORTER_OTLP_ENDPOINT: '127.0.0.1:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT: an http:// or https:// URL'],
  [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector/v1/traces' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
  [
    { DATABASE_REPLICA_URL: 'postgres://postgres@127.0.0.1:1/replica' },
    'DATABASE_REPLICA_URL: the embedded database has no replicas',
  ],
] as const) {
  test(`a bad ${setting} stops the process with exit code 1, naming the setting`, async () => {
    const service = startService({ PGLITE_DIR: 'memory://', ...env });
    assert.is(await service.exited, 1);
    assert.match(service.output(), setting);
  });
}

test('an OTLP endpoint refused at start is not echoed: what reads as its scheme may be a credential', async () => {
  const service = startService({ PGLITE_DIR: 'memory://', OTEL_EXPORTER_OTLP_ENDPOINT: 'user:s3cret@collector:4318' });
  assert.is(await service.exited, 1);
  assert.match(service.output(), 'OTEL_EXPORTER_OTLP_ENDPOINT: an http:// or https:// URL');
  assert.not.match(service.output(), 's3cret');
});

test("only the OTLP endpoint in effect is checked: the traces' own, beside a general one left unused", async () => {
  const service = startService({
    PGLITE_DIR: 'memory://',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:1/v1/traces',
  });
  await service.listening;
  assert.is(await service.stop('SIGTERM'), 0);
});

test('SIGTERM to `npm start` itself (as a process manager sends it) stops the service gracefully, and nothing is left running', async () => {
  const child = spawn('npm', ['start'], {
    cwd: join(import.meta.dirname, '..', '..'),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      PGLITE_DIR: 'memory://',
      DATA_DIR: tempDir(),
    },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d;
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Whatever happens, nothing of this test outlives it (its own process group).
  try {
    let port = 0;
    for (let waited = 0; !port; waited += 100) {
      assert.ok(waited < 60_000 && child.exitCode === null, `npm start did not listen:\n${out}`);
      port = Number(/"port":(\d+),"role"/.exec(out)?.[1] ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.is((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
    child.kill('SIGTERM'); // npm's own pid only, not its process group
    assert.is(await exited, 0, out.slice(-2000));
    assert.match(out, '"msg":"stopped"');
    const refused = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      () => false,
      () => true,
    );
    assert.ok(refused, 'the service still listens after npm start ended');
  } finally {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* all ended */
    }
  }
});

test('SHUTDOWN_DELAY_MS: after SIGTERM the process is not ready but serves for the delay, then stops cleanly', async () => {
  const service = startService({ PGLITE_DIR: 'memory://', ADMIN_TOKEN: ADMIN, SHUTDOWN_DELAY_MS: '1500' });
  const port = await service.listening;
  assert.is((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
  const signalled = Date.now();
  service.child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 300));
  // A balancer polling readiness sees 503 and stops sending; what it still sends meanwhile is served.
  assert.is((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 503);
  assert.is((await adminCall(port, 'accounts.create', { name: 'during the delay', role: 'brand' })).status, 200);
  assert.is(await service.exited, 0);
  assert.ok(
    Date.now() - signalled >= 1500,
    `exited ${Date.now() - signalled} ms after the signal, before the delay ended`,
  );
  assert.match(service.output(), /"msg":"stopped"/);
});

test('a connection opened ahead of a request that never came (as client pools do) does not hold up a stop', async () => {
  const { connect } = await import('node:net');
  const service = startService({ PGLITE_DIR: 'memory://', SHUTDOWN_DELAY_MS: '0' });
  const port = await service.listening;
  const idle = connect(port, '127.0.0.1');
  await new Promise((resolve) => idle.once('connect', resolve));
  const signalled = Date.now();
  service.child.kill('SIGTERM');
  assert.is(await service.exited, 0, service.output().slice(-2000));
  assert.ok(Date.now() - signalled < 5000, `stopped ${Date.now() - signalled} ms after the signal`);
  assert.not.match(service.output(), /did not finish/);
  idle.destroy();
});

test('the same signal twice within a second (npm start relays the one the terminal also sends) is one stop: it still serves for the delay', async () => {
  const service = startService({ PGLITE_DIR: 'memory://', ADMIN_TOKEN: ADMIN, SHUTDOWN_DELAY_MS: '1500' });
  const port = await service.listening;
  const signalled = Date.now();
  service.child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 100));
  service.child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.is((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 503);
  assert.is((await adminCall(port, 'accounts.create', { name: 'during the delay', role: 'brand' })).status, 200);
  assert.is(await service.exited, 0);
  assert.ok(
    Date.now() - signalled >= 1500,
    `exited ${Date.now() - signalled} ms after the first signal, before the delay ended`,
  );
});

test('a second process on the same PGLITE_DIR refuses to start; the first keeps its data', async () => {
  const dir = join(tempDir(), 'pglite');
  const env = { PGLITE_DIR: dir, ADMIN_TOKEN: ADMIN };
  const first = startService(env);
  const port = await first.listening;
  const account = await (await adminCall(port, 'accounts.create', { name: 'Kept', role: 'brand' })).json();
  const accountId = account.result.data.id;
  assert.is((await adminCall(port, 'contacts.create', { accountId, email: 'kept@example.com' })).status, 200);

  const second = startService(env);
  assert.is(await second.exited, 1);
  assert.match(second.output(), /in use by another process/);

  assert.is((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
  assert.is((await adminCall(port, 'contacts.create', { accountId, email: 'KEPT@example.com' })).status, 409);
  assert.is(await first.stop('SIGTERM'), 0);
  assert.match(first.output(), /"msg":"stopped"/);

  // Reopened after a clean stop, the folder still holds what the first process wrote.
  const reopened = startService(env);
  const port2 = await reopened.listening;
  assert.is((await adminCall(port2, 'contacts.create', { accountId, email: 'kept@example.com' })).status, 409);
  assert.is(await reopened.stop('SIGINT'), 0);
});

test("after SIGKILL a start at once takes the dead process's lock over and serves its data; a live one is still refused", async () => {
  const dataDir = tempDir();
  const env = { PGLITE_DIR: join(dataDir, 'pglite'), DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN };
  const killed = startService(env);
  const port = await killed.listening;
  const account = await (await adminCall(port, 'accounts.create', { name: 'Before the crash', role: 'brand' })).json();
  const accountId = account.result.data.id;
  assert.is((await adminCall(port, 'contacts.create', { accountId, email: 'crash@example.com' })).status, 200);
  await killed.stop('SIGKILL');
  // For 10 s its lock looks as fresh as a live process's; a start on a busy machine can take longer than that to
  // reach it, so the lock is made to look fresh for as long as the test runs: only the dead owner may give it away.
  const later = new Date(Date.now() + 3_600_000);
  utimesSync(`${env.PGLITE_DIR}.lock`, later, later);

  const restarted = startService(env);
  const port2 = await restarted.listening; // rejects with the output when the process ends instead
  assert.not.match(restarted.output(), /in use by another process/);
  assert.is((await fetch(`http://127.0.0.1:${port2}/readyz`)).status, 200);
  assert.is(
    (await adminCall(port2, 'contacts.create', { accountId, email: 'crash@example.com' })).status,
    409,
    'the data written before the crash is gone',
  );

  const second = startService(env);
  assert.is(await second.exited, 1);
  assert.match(second.output(), /in use by another process/);
  assert.is(await restarted.stop(), 0);
});

test('the logs carry request ids and never the admin token', async () => {
  const service = startService({ PGLITE_DIR: 'memory://', ADMIN_TOKEN: ADMIN, SEED_DEMO: '1' });
  const port = await service.listening;
  const res = await fetch(`http://127.0.0.1:${port}/trpc/admin.accounts.create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}`, 'x-request-id': 'req-log-check' },
    body: JSON.stringify({ name: 'x', role: 'brand' }),
  });
  assert.is(res.status, 200);
  await service.stop();
  const lines = service
    .output()
    .split('\n')
    .filter((l) => l.trim() !== '');
  assert.ok(lines.length > 0, 'the service wrote no lines');
  for (const line of lines) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      assert.unreachable(`a line that is not JSON: ${line}`);
    }
    assert.ok(
      typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed),
      `a line that is not a JSON object: ${line}`,
    );
  }
  assert.ok(lines.some((l) => l.includes('"id":"req-log-check"')));
  assert.not.match(service.output(), ADMIN);
  assert.match(service.output(), /demo data loaded/);
});

test.run();
