// npm run bench:commands — brand commands accepted per second at 32 concurrent clients, by an `api` process and by one
// `all` process that runs them meanwhile, against a bare node:http + pg peer writing the same accepted-command row in
// one transaction per request; then POST-to-result latency at a steady rate with the executor running, read from the
// database, and as a client polling each result sees it (BENCH_POLLED_RATES, default 100,200). Needs DATABASE_URL (any
// database: the service migrates it and makes its own accounts). Writes its section of docs/BENCHMARKS.md; BENCH_LABEL
// says there what code was measured.
//
// Server processes are pinned to CPU 0 and the load generator (this process) to CPU 1; PostgreSQL is left free.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { integratorLoggedIn, processClient, type ServiceProcess } from '../tests/support/process.ts';
import { startBuiltPeer, startBuiltService } from './built.ts';
import { steadyFlow } from './command-flow.ts';
import { POLL_MS, type PolledFlow, polledFlow } from './command-polling.ts';
import { type Kind, type Sample, writeCommandsSection } from './commands-report.ts';
import { cpuSeconds, loadAverage, percentile } from './report.ts';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) throw new Error('DATABASE_URL must name a PostgreSQL database');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 200);
// POST-to-result with the client polling each result, in one `all` process: judged at 100/s.
const POLLED_RATES = (process.env.BENCH_POLLED_RATES ?? '25,50,100').split(',').map(Number);
// BENCH_STEADY_ONLY=1: only the POST-to-result part, printed and not written (to try a change of the executor).
const STEADY_ONLY = process.env.BENCH_STEADY_ONLY === '1';
const CONNECTIONS = 32;
// BENCH_NODE_ARGS: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, to see where the service spends its time.
const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
try {
  execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
} catch {
  /* unpinned */
}

const ADMIN = 'bench-admin-token-0123456789';
const loadAtStart = loadAverage();
const dataDir = mkdtempSync(join(tmpdir(), 'pbi-bench-commands-'));
const env = (role: string) => ({
  DATABASE_URL,
  DATA_DIR: dataDir,
  NODE_ENV: 'production',
  JWT_SECRET: 'bench-secret-0123456789-0123456789-0123',
  ADMIN_TOKEN: ADMIN,
  SERVICE_ROLE: role,
  LOGIN_LIMIT_PER_EMAIL: '1000',
  LOGIN_LIMIT_PER_ADDRESS: '1000',
  API_RATE_LIMIT_PER_ACCOUNT: '1000000',
  API_CONCURRENCY_PER_ACCOUNT: '10000',
  LOG_LEVEL: 'warn',
});
const started: ServiceProcess[] = [];
const start = (role: 'api' | 'all' | 'worker', cpu: number | undefined = 0): ServiceProcess => {
  // As deployed: dist/, built first (bench/built.ts).
  const proc = startBuiltService({ ...env(role), LOG_LEVEL: 'info' }, { cpu, nodeArgs });
  started.push(proc);
  return proc;
};
// A failed run must not leave a service behind to skew the next one.
process.on('exit', () => {
  for (const proc of started) proc.child.kill('SIGKILL');
});

// A brand with one order, logged in through the mail like an integrator.
const setup = start('all');
const client = processClient(await setup.listening, ADMIN);
const { accountId: brandId, token } = await integratorLoggedIn(
  client,
  dataDir,
  'brand',
  `bench-brand-${randomUUID().slice(0, 8)}@example.com`,
  86_400,
);
// Commands spread over many orders, as a brand's traffic is: changes to one order run one at a time (row lock).
const orderIds: string[] = [];
for (let i = 0; i < 200; i++)
  orderIds.push((await client.admin<{ apiId: string }>('jobs.create', { brandAccountId: brandId })).apiId);
await setup.stop();

let next = 0;
const command = () =>
  JSON.stringify({
    _v: '1.0.0',
    _cid: randomUUID(),
    _type: 'RefreshOrder',
    orderId: orderIds[next++ % orderIds.length],
  });
const load = (port: number, path: string, seconds: number, auth: boolean) =>
  new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: CONNECTIONS,
        duration: seconds,
        requests: [
          {
            method: 'POST',
            path,
            headers: { 'content-type': 'application/json', ...(auth && { authorization: `Bearer ${token}` }) },
            setupRequest: (req) => ({ ...req, body: command() }),
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });

const accepted: Record<Kind, Sample[]> = { service: [], all: [], bare: [], floor: [] };
// The floor app answers only the POST here: it needs no answers of the other paths.
const floorAnswers = join(dataDir, 'floor-answers.json');
writeFileSync(floorAnswers, '{}');
const db = new pg.Client({ connectionString: DATABASE_URL });
await db.connect();
const KINDS: Kind[] = ['bare', 'floor', 'service', 'all'];
for (let round = 0; round < (STEADY_ONLY ? 0 : ROUNDS); round++) {
  for (const kind of round % 2 === 0 ? KINDS : [...KINDS].reverse()) {
    // `service`: the API role alone, accepting without the executor on its core; `all`: one process that also runs
    // what it accepts, meanwhile.
    const proc =
      kind === 'bare'
        ? startBuiltPeer('bench/bare-commands.ts', { DATABASE_URL, BRAND_ID: brandId }, { cpu: 0 })
        : kind === 'floor'
          ? startBuiltPeer('bench/floor-app.ts', { NODE_ENV: 'production', FLOOR_ANSWERS: floorAnswers }, { cpu: 0 })
          : start(kind === 'all' ? 'all' : 'api');
    started.push(proc);
    const port = await proc.listening;
    const path = kind === 'bare' ? '/commands' : '/v3/commands';
    await load(port, path, 3, kind !== 'bare');
    const from = new Date();
    const r = await load(port, path, DURATION, kind !== 'bare');
    const to = new Date();
    // Why a round had errors is in the server's last lines.
    if (r.errors)
      console.log(
        `${kind}: ${r.errors} errors, ${r.timeouts} timeouts; its last output:\n${proc.output().slice(-3000)}`,
      );
    await proc.stop();
    const executed =
      kind === 'all'
        ? (
            await db.query<{ n: number }>(
              `select count(*)::int as n from commands where account_id = $1
      and status in ('succeeded', 'failed') and finished_at between $2 and $3`,
              [brandId, from, to],
            )
          ).rows[0]!.n / DURATION
        : undefined;
    accepted[kind].push({
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      non2xx: r.non2xx,
      errors: r.errors,
      executed,
    });
    console.log(
      `${kind}: ${r.requests.average.toFixed(0)} accepted/s p99 ${r.latency.p99} ms non2xx ${r.non2xx} errors ${r.errors}${executed === undefined ? '' : `, executed ${executed.toFixed(0)}/s`}`,
    );
    // What a round left accepted would run first in the next one: end it, as if run. They stay as finished results, as
    // a day of them does on a live server.
    await settle(db);
  }
}
await db.end();

/**
 * What autovacuum does on a default server (this one may have it off): ends what a part left accepted, then vacuums
 * and analyzes. Emptying the table instead (as this benchmark once did) left statistics that say "empty", and the
 * planner then claimed with a sequential scan that grew with every command of the next part.
 */
async function settle(client: pg.Client) {
  await client.query(
    `update commands set status = 'succeeded', finished_at = coalesce(finished_at, now()), lease_until = null, claim_token = null
    where account_id = $1 and status = 'accepted'`,
    [brandId],
  );
  await client.query('vacuum analyze commands');
  await client.query('vacuum analyze events');
  await client.query('vacuum analyze deliveries');
}

const steady = steadyFlow({ start, command, token, DATABASE_URL, brandId, settle });

const flows = {} as Record<'api + worker' | 'one process', Awaited<ReturnType<typeof steady>>>;
for (const topology of ['api + worker', 'one process'] as const) {
  const flow = (flows[topology] = await steady(DURATION * 2, RATE, topology));
  console.log(
    `steady ${RATE}/s, ${topology}: p50 ${percentile(flow.latencies, 0.5).toFixed(1)} ms p99 ${percentile(flow.latencies, 0.99).toFixed(1)} ms ` +
      `(POST p50 ${flow.post.p50.toFixed(1)} p99 ${flow.post.p99.toFixed(1)}) failures ${flow.failures}`,
  );
}

// The issue's case: one `all` process whose client polls every result until it is there.
const polled: { rate: number; flow: PolledFlow; cpuShare: number; cpuPerCommand: number }[] = [];
for (const rate of POLLED_RATES) {
  const proc = start('all');
  try {
    const port = await proc.listening;
    await polledFlow({ port, token, seconds: 3, rate, command });
    const [cpu0, t0] = [cpuSeconds(proc.child.pid!), performance.now()];
    const flow = await polledFlow({ port, token, seconds: DURATION * 2, rate, command });
    // Over the whole flow: the sending, and the tail while the last results come and are polled.
    const cpu = cpuSeconds(proc.child.pid!) - cpu0;
    const cpuShare = cpu / ((performance.now() - t0) / 1000);
    const cpuPerCommand = cpu / flow.sent;
    polled.push({ rate, flow, cpuShare, cpuPerCommand });
    console.log(
      `polled every ${POLL_MS} ms at ${rate}/s, one process: p50 ${flow.p50.toFixed(1)} ms p99 ${flow.p99.toFixed(1)} ms, ` +
        `CPU ${(100 * cpuShare).toFixed(0)} % of its core, ${flow.finished} of ${flow.sent} finished, failures ${JSON.stringify(flow.failures)} ${JSON.stringify(flow.unexpected)}, ${(flow.polls / flow.sent).toFixed(1)} polls per command`,
    );
  } finally {
    await proc.stop();
  }
  const db = new pg.Client({ connectionString: DATABASE_URL });
  await db.connect();
  await settle(db);
  await db.end();
}
if (STEADY_ONLY) process.exit(0);
await writeCommandsSection({ ROUNDS, DURATION, RATE, CONNECTIONS, loadAtStart, accepted, flows, polled });
