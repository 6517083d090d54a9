import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { integratorLoggedIn, processClient, type ServiceProcess, startService } from '../support/process.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';
import { ADMIN, adminUrl, sql, urlOf } from './cluster-support.ts';

// One `npm start` on PostgreSQL with WEB_CONCURRENCY=2: a primary, two API processes sharing the port and a worker
// (server/processes/). The tests follow one start, in order: ready, metrics, a killed API process, SIGTERM.
const test = suite('the whole machine: a cluster under one start');
const database = `pbi_cluster_${process.pid}_${Date.now()}`;
const databaseUrl = () => urlOf(database);
const dataDir = mkdtempSync(join(tmpdir(), 'pbi-cluster-'));

let service: ServiceProcess;
let port = 0;
let slowReceiver: Server;

const lines = () =>
  service
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
/** The primary's processes running the service (tsx's esbuild helper is a child of its own). */
const members = () =>
  execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(service.child.pid)], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes('server/main'))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
const apiPids = () =>
  lines()
    .filter((l) => l.msg === 'listening' && l.role === 'api')
    .map((l) => l.pid as number);

async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    assert.ok(Date.now() < deadline, `${what} within ${timeoutMs} ms:\n${service.output().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test.before(async () => {
  if (!onPostgres) return;
  await sql(adminUrl(), `create database ${database}`);
  // A receiver that takes its time: deliveries are being sent when the stop comes.
  slowReceiver = createServer((_req, res) => {
    setTimeout(() => res.end('ok'), 700);
  });
  await new Promise<void>((resolve) => slowReceiver.listen(0, '127.0.0.1', resolve));
});

test.after(async () => {
  await service?.stop('SIGKILL');
  try {
    execFileSync('pkill', ['-KILL', '-P', String(service?.child.pid)]);
  } catch {
    /* none left */
  }
  if (slowReceiver)
    await new Promise<void>((resolve) => {
      slowReceiver.closeAllConnections();
      slowReceiver.close(() => resolve());
    });
  rmSync(dataDir, { recursive: true, force: true });
  if (onPostgres) await sql(adminUrl(), `drop database if exists ${database} with (force)`);
});

test('two API processes and the worker start under one primary; the ready line counts them and their connections', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  service = startService({
    DATABASE_URL: databaseUrl(),
    WEB_CONCURRENCY: '2',
    DATABASE_POOL_SIZE: '5',
    ADMIN_TOKEN: ADMIN,
    DATA_DIR: dataDir, // no JWT_SECRET: the processes share the key generated in it
    SHUTDOWN_DELAY_MS: '1500',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
  });
  const ready = await eventually("the primary's ready line", () =>
    lines().find((l) => l.msg?.toString().startsWith('ready: ') && l.role === 'all'),
  );
  port = ready.port as number;
  assert.is(
    ready.msg,
    `ready: http://localhost:${port} (integrator portal: http://localhost:${port}/portal, API reference: ` +
      `http://localhost:${port}/docs); 2 API processes and a worker, at most 15 database connections (5 each)`,
  );
  assert.is(ready.processes, 3);
  assert.is(ready.databaseConnections, 15);
  // Each process writes its own lines: they may come out just after the primary's.
  const pids = await eventually(
    'two API processes listening',
    () => (new Set(apiPids()).size === 2 ? apiPids() : undefined),
    5000,
  );
  await eventually(
    'the worker process started its work',
    () => lines().find((l) => l.msg === 'worker started' && typeof l.pid === 'number'),
    5000,
  );
  // What holds for the whole start is said once, not by each of its three processes.
  const said = (start: string) => lines().filter((l) => l.msg?.toString().startsWith(start)).length;
  assert.is(said('JWT_SECRET is not set'), 1);
  const [setting] = await sql<{ autovacuum: string }>(adminUrl(), 'show autovacuum');
  assert.is(said('autovacuum is off'), setting?.autovacuum === 'off' ? 1 : 0);
  const children = members();
  assert.is(children.length, 3, 'the primary has three processes');
  for (const pid of pids) assert.ok(children.includes(pid));
  assert.is((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
});

test('/metrics answered by any API process adds up the counters of every process; a queue gauge is not summed', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  for (let i = 0; i < 20; i++) assert.is((await fetch(`http://127.0.0.1:${port}/openapi.json`)).status, 200);
  for (let scrape = 0; scrape < 4; scrape++) {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
    assert.is(res.status, 200);
    const text = await res.text();
    // Each API process answered about half: only the sum over both is 20, whichever of them is scraped.
    assert.match(text, /^http_requests_total\{method="GET",route="\/openapi\.json",status="200"\} 20$/m);
    // Three processes of 5 connections each.
    assert.match(text, /^db_pool_connections\{state="max"\} 15$/m);
    assert.match(text, /^queue_stats_up 1$/m);
  }
  // One endpoint failing, one disabled for failing, one by its integrator: each process reads the same rows.
  const client = processClient(port, ADMIN);
  const accounts = await Promise.all(
    [0, 1].map(
      async (i) =>
        (await client.admin<{ id: string }>('accounts.create', { name: `Endpoints ${i}`, role: 'brand' })).id,
    ),
  );
  await sql(
    databaseUrl(),
    `insert into webhook_configs (id, account_id, scope, url, transformer, version, enabled, created_at, updated_at, failing_since, disabled_reason)
    values (gen_random_uuid(), $1, 'brand', 'http://127.0.0.1:9/a', 'default', '1.3.0', true, now(), now(), now(), null),
           (gen_random_uuid(), $1, 'partner', 'http://127.0.0.1:9/b', 'default', '1.3.0', false, now(), now(), now(), 'failing'),
           (gen_random_uuid(), $2, 'brand', 'http://127.0.0.1:9/c', 'default', '1.3.0', false, now(), now(), null, 'integrator')`,
    accounts,
  );
  const scraped = await eventually('the endpoints counted', async () => {
    const text = await (
      await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })
    ).text();
    return /^webhook_endpoints_failing 0$/m.test(text) ? undefined : text;
  });
  assert.match(scraped, /^webhook_endpoints_failing 1$/m);
  assert.match(scraped, /^webhook_endpoints_disabled\{reason="failing"\} 1$/m);
  assert.match(scraped, /^webhook_endpoints_disabled\{reason="integrator"\} 1$/m);
});

test('commands sent through the cluster are run by its worker', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const client = processClient(port, ADMIN);
  const brand = await integratorLoggedIn(client, dataDir, 'brand', 'brand@cluster.example');
  await client.admin('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: `http://127.0.0.1:${(slowReceiver.address() as AddressInfo).port}/hooks`,
    transformer: 'default',
    version: '1.3.0',
  });
  const { apiId } = await client.admin<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
  const cid = randomUUID();
  const sent = await client.rest('/v3/commands', {
    method: 'POST',
    token: brand.token,
    body: JSON.stringify({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: apiId }),
  });
  assert.is(sent.status, 202);
  await eventually('the command ran', async () => {
    const [row] = await sql<{ status: string }>(databaseUrl(), 'select status from commands where cid = $1', [cid]);
    return row?.status === 'succeeded' ? row : undefined;
  });
});

test('a killed API process is replaced: a new process answers, alone, once the other original is killed too', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const [first, second] = apiPids() as [number, number];
  process.kill(first, 'SIGKILL');
  const replacement = await eventually('a new API process listening', () =>
    apiPids().find((pid) => pid !== first && pid !== second),
  );
  assert.match(service.output(), /"msg":"an API process died; starting another"/);
  // The second death of the role within a minute waits 2 s for its replacement: meanwhile only the new one serves.
  process.kill(second, 'SIGKILL');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const alive = members();
  assert.ok(
    alive.includes(replacement) && !alive.includes(first) && !alive.includes(second),
    `processes: ${alive.join(', ')}`,
  );
  for (let i = 0; i < 10; i++) assert.is((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
  await eventually('the second replacement listening', () =>
    apiPids().filter((pid) => pid !== first && pid !== second).length === 2 ? true : undefined,
  );
});

test('SIGTERM: API processes serve on through SHUTDOWN_DELAY_MS (not ready), all exit, nothing stays claimed, exit code 0', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const client = processClient(port, ADMIN);
  const brand = await integratorLoggedIn(client, dataDir, 'brand', 'brand2@cluster.example');
  await client.admin('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: `http://127.0.0.1:${(slowReceiver.address() as AddressInfo).port}/hooks`,
    transformer: 'default',
    version: '1.3.0',
  });
  // Orders whose events the worker is sending to the slow receiver, and commands it is running, when the stop comes.
  for (let i = 0; i < 10; i++) await client.admin('jobs.create', { brandAccountId: brand.accountId });
  const { apiId } = await client.admin<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
  await Promise.all(
    Array.from({ length: 30 }, () =>
      client.rest('/v3/commands', {
        method: 'POST',
        token: brand.token,
        body: JSON.stringify({ _v: '1.0.0', _cid: randomUUID(), _type: 'RefreshOrder', orderId: apiId }),
      }),
    ),
  );
  const running = members();
  const signalled = Date.now();
  service.child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.is((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 503);
  assert.is(
    (await client.admin<{ id: string }>('accounts.create', { name: 'during the delay', role: 'partner' })).id.length,
    36,
  );
  assert.is(await service.exited, 0, service.output().slice(-3000));
  assert.ok(Date.now() - signalled >= 1500, 'the delay was served');
  for (const pid of running)
    assert.throws(() => process.kill(pid, 0), undefined, `process ${pid} outlived the primary`);
  assert.is(lines().filter((l) => l.msg === 'stopped').length, 4, 'three processes and the primary stopped');
  const [claimed] = await sql<{ commands: number; deliveries: number }>(
    databaseUrl(),
    `select
    (select count(*)::int from commands where status = 'running') as commands,
    (select count(*)::int from delivery_queue where lease_until > now()) as deliveries`,
  );
  assert.equal(claimed, { commands: 0, deliveries: 0 }, 'nothing is left claimed');
});

test.run();
