// npm run bench:whole-machine — what one `npm start` does with the machine: accepted brand commands per second and
// page-1 polling requests per second with WEB_CONCURRENCY 1 (one `all` process) and 2 (a primary, two API processes and
// the worker), interleaved rounds in one run, on PostgreSQL; then start-to-ready (spawn to the first 200 of /readyz)
// for the sources under tsx and for the build (npm run build, run by scripts/start.mjs), on a fresh and an existing
// data folder or database, embedded and PostgreSQL. Needs DATABASE_URL (any database on the server: the service
// migrates it and makes its own accounts; the start-to-ready part creates databases of its own beside it and drops
// them). Writes its section of docs/BENCHMARKS.md; BENCH_LABEL says there what code was measured.
//
// Nothing is pinned: the point is the whole machine. The load generator (this process) and PostgreSQL share its 2 cores
// with the service, as they would not in production.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { integratorLoggedIn, processClient, type ServiceProcess, startScript } from '../tests/support/process.ts';
import { freePort } from '../tests/support/temp-postgres.ts';
import { loadAverage } from './report.ts';
import {
  key,
  type Sample,
  type Start,
  startKey,
  type Target,
  writeWholeMachineSection,
} from './whole-machine-report.ts';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) throw new Error('DATABASE_URL must name a PostgreSQL database');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const STARTS = Number(process.env.BENCH_STARTS ?? 3);
const CONNECTIONS = 64;
const ADMIN = 'bench-admin-token-0123456789';
const root = join(import.meta.dirname, '..');
const loadAtStart = loadAverage();
const dataDir = mkdtempSync(join(tmpdir(), 'pbi-bench-whole-'));
const started: ServiceProcess[] = [];
process.on('exit', () => {
  for (const proc of started) proc.child.kill('SIGKILL');
});

// The build the production start runs, made now from the sources as they are.
const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stderr}`);

const env = (extra: Record<string, string>) => ({
  DATABASE_URL,
  DATA_DIR: dataDir,
  NODE_ENV: 'production',
  JWT_SECRET: 'bench-secret-0123456789-0123456789-0123',
  ADMIN_TOKEN: ADMIN,
  LOGIN_LIMIT_PER_EMAIL: '1000',
  LOGIN_LIMIT_PER_ADDRESS: '1000',
  API_RATE_LIMIT_PER_ACCOUNT: '1000000',
  API_CONCURRENCY_PER_ACCOUNT: '10000',
  LOG_LEVEL: 'warn',
  ...extra,
});
/** `npm start` as production runs it: the build, through scripts/start.mjs. */
const startBuilt = (extra: Record<string, string>) => {
  const proc = startScript('scripts/start.mjs', extra, { javascript: true });
  started.push(proc);
  return proc;
};

async function untilReady(port: number, proc: ServiceProcess, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`the service exited:\n${proc.output().slice(-3000)}`);
    const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`not ready within ${timeoutMs} ms:\n${proc.output().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// A brand with 200 orders, and a partner with 200 jobs, each logged in through the mail like an integrator.
const setupPort = await freePort();
const setup = startBuilt(env({ WEB_CONCURRENCY: '1', PORT: String(setupPort) }));
await untilReady(setupPort, setup);
const client = processClient(setupPort, ADMIN);
const tag = randomUUID().slice(0, 8);
const brand = await integratorLoggedIn(client, dataDir, 'brand', `bench-brand-${tag}@example.com`, 86_400);
const partner = await integratorLoggedIn(client, dataDir, 'partner', `bench-partner-${tag}@example.com`, 86_400);
await client.admin('webhookConfigs.upsert', {
  accountId: partner.accountId,
  scope: 'partner',
  transformer: 'partner-format',
  version: '1.3.0',
});
const orderIds: string[] = [];
for (let i = 0; i < 200; i++) {
  orderIds.push(
    (
      await client.admin<{ apiId: string }>('jobs.create', {
        brandAccountId: brand.accountId,
        partnerId: partner.accountId,
        status: 'accepted',
      })
    ).apiId,
  );
}
await setup.stop();

let next = 0;
const command = () =>
  JSON.stringify({
    _v: '1.0.0',
    _cid: randomUUID(),
    _type: 'RefreshOrder',
    orderId: orderIds[next++ % orderIds.length],
  });
const PAGE_ONE = '/v3/partner-orders/paginated?page=1&pageSize=50';
const load = (port: number, target: Target, seconds: number) =>
  new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: CONNECTIONS,
        duration: seconds,
        requests: [
          target === 'commands'
            ? {
                method: 'POST',
                path: '/v3/commands',
                headers: { 'content-type': 'application/json', authorization: `Bearer ${brand.token}` },
                setupRequest: (req) => ({ ...req, body: command() }),
              }
            : { method: 'GET', path: PAGE_ONE, headers: { authorization: `Bearer ${partner.token}` } },
        ],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });

/** Ends what a round left accepted, and vacuums, as autovacuum would on a default server (bench/commands.ts). */
async function settle() {
  const db = new pg.Client({ connectionString: DATABASE_URL });
  await db.connect();
  await db.query(
    `update commands set status = 'succeeded', finished_at = coalesce(finished_at, now()), lease_until = null, claim_token = null
    where account_id = $1 and status = 'accepted'`,
    [brand.accountId],
  );
  for (const table of ['commands', 'events', 'deliveries', 'jobs']) await db.query(`vacuum analyze ${table}`);
  await db.end();
}

/** Commands the start's worker finished per second between `from` and `to`. */
async function executedPerSecond(from: Date, to: Date) {
  const db = new pg.Client({ connectionString: DATABASE_URL });
  await db.connect();
  const {
    rows: [row],
  } = await db.query<{ n: number }>(
    `select count(*)::int as n from commands where account_id = $1
    and status in ('succeeded', 'failed') and finished_at between $2 and $3`,
    [brand.accountId, from, to],
  );
  await db.end();
  return row!.n / ((to.getTime() - from.getTime()) / 1000);
}
const CONCURRENCIES = [1, 2];
const samples = new Map<string, Sample[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const concurrency of round % 2 === 0 ? CONCURRENCIES : [...CONCURRENCIES].reverse()) {
    const port = await freePort();
    const proc = startBuilt(env({ WEB_CONCURRENCY: String(concurrency), PORT: String(port) }));
    await untilReady(port, proc);
    for (const target of ['commands', 'polling'] as const) {
      await load(port, target, 3);
      const from = new Date();
      const r = await load(port, target, DURATION);
      const to = new Date();
      if (r.errors)
        console.log(
          `${concurrency}/${target}: ${r.errors} errors; the service's last output:\n${proc.output().slice(-2000)}`,
        );
      const sample = {
        rps: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        non2xx: r.non2xx,
        errors: r.errors,
        executed: await executedPerSecond(from, to),
      };
      samples.set(key(concurrency, target), [...(samples.get(key(concurrency, target)) ?? []), sample]);
      console.log(
        `WEB_CONCURRENCY=${concurrency} ${target}: ${sample.rps.toFixed(0)}/s p99 ${sample.p99} ms non2xx ${sample.non2xx} errors ${sample.errors}, executed ${sample.executed.toFixed(0)}/s`,
      );
      await settle(); // the polls are measured without a backlog of commands being executed meanwhile
    }
    await proc.stop();
  }
}

// Start-to-ready: from the spawn to the first 200 of /readyz, polled every 20 ms.
const startTimes = new Map<string, number[]>();
const server = new URL(DATABASE_URL);
const databases: string[] = [];
const folders: string[] = [];
async function timeStart(s: Start, place: string): Promise<number> {
  const port = await freePort();
  const settings: Record<string, string> =
    s.database === 'embedded'
      ? {
          PGLITE_DIR: join(place, 'pglite'),
          DATA_DIR: place,
          PORT: String(port),
          LOG_LEVEL: 'warn',
          WEB_CONCURRENCY: '',
        }
      : {
          DATABASE_URL: Object.assign(new URL(server), { pathname: `/${place}` }).toString(),
          DATA_DIR: dataDir,
          PORT: String(port),
          LOG_LEVEL: 'warn',
          WEB_CONCURRENCY: '',
        };
  const began = performance.now();
  // WEB_CONCURRENCY empty: unset, the default of npm start.
  const proc = s.how === 'built' ? startBuilt(settings) : startScript('server/main.ts', settings);
  if (s.how === 'tsx') started.push(proc);
  await untilReady(port, proc);
  const ms = performance.now() - began;
  await proc.stop();
  return ms;
}
for (let i = 0; i < STARTS; i++) {
  for (const how of i % 2 === 0 ? (['tsx', 'built'] as const) : (['built', 'tsx'] as const)) {
    for (const database of ['embedded', 'postgresql'] as const) {
      let place: string;
      if (database === 'embedded') {
        place = mkdtempSync(join(tmpdir(), 'pbi-bench-start-'));
        folders.push(place);
      } else {
        place = `pbi_bench_start_${process.pid}_${databases.length}`;
        databases.push(place);
      }
      for (const data of ['fresh', 'existing'] as const) {
        const ms = await timeStart({ how, database, data }, place);
        startTimes.set(startKey({ how, database, data }), [
          ...(startTimes.get(startKey({ how, database, data })) ?? []),
          ms,
        ]);
        console.log(`start-to-ready ${how} ${database} ${data}: ${ms.toFixed(0)} ms`);
      }
    }
  }
}
for (const folder of folders) rmSync(folder, { recursive: true, force: true });
const admin = new pg.Client({ connectionString: Object.assign(new URL(server), { pathname: '/postgres' }).toString() });
await admin.connect();
for (const name of databases) await admin.query(`drop database if exists ${name} with (force)`);
await admin.end();
rmSync(dataDir, { recursive: true, force: true });

await writeWholeMachineSection({ ROUNDS, DURATION, STARTS, CONNECTIONS, PAGE_ONE, loadAtStart, samples, startTimes });
