// npm run bench:cpu — CPU time per request of five paths of the real service, each beside the same stack's floor
// (bench/floor-app.ts) in the same run, and the round trips to PostgreSQL each request makes. CPU is read from the
// server process itself (utime + stime in /proc/<pid>/stat) over a fixed number of requests: on a shared machine that
// holds far steadier than requests per second. DATABASE_URL names the PostgreSQL database (the service migrates it);
// BENCH_EMBEDDED=1 adds a run on the embedded database (alone when there is no DATABASE_URL). BENCH_REQUESTS (2000),
// BENCH_CONNECTIONS (16), BENCH_ROUNDS (3), BENCH_LABEL (what code this is, written into the section).
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { integratorLoggedIn, processClient, type ServiceProcess } from '../tests/support/process.ts';
import { startBuiltPeer, startBuiltService } from './built.ts';
import { benchPaths, prepare, type BenchPath, type PathName } from './cpu-fixtures.ts';
import { roundTripProxy } from './pg-round-trips.ts';
import { codeLine, loadAverage, median, writeSection } from './report.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const EMBEDDED = process.env.BENCH_EMBEDDED === '1' || !DATABASE_URL;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP = 500;
const RT_REQUESTS = 200;
const LABEL = process.env.BENCH_LABEL;
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
try { execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' }); } catch { /* unpinned */ }

const ADMIN = 'bench-admin-token-0123456789';
const loadAtStart = loadAverage();
const started: ServiceProcess[] = [];
process.on('exit', () => { for (const proc of started) proc.child.kill('SIGKILL'); });
// The service as deployed (dist/), the floor app compiled the same way (bench/built.ts).
const launch = (script: 'server/main.ts' | 'bench/floor-app.ts', env: Record<string, string>, cpu?: number) => {
  const proc = script === 'server/main.ts' ? startBuiltService(env, { cpu }) : startBuiltPeer(script, env, { cpu });
  started.push(proc);
  return proc;
};
const temporary: string[] = [];
const temporaryDir = (prefix: string) => { const dir = mkdtempSync(join(tmpdir(), prefix)); temporary.push(dir); return dir; };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU time used so far by a process, all its threads, in µs. */
function cpuMicros(pid: number) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLK_TCK;
}

/**
 * `amount` requests of one path from `connections` clients, each sending its next request when its answer is in
 * (undici, in this process, on CPU 1). Answers other than the path's own status, and connection errors, are counted.
 */
async function send(port: number, path: BenchPath, amount: number, connections: number) {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections, pipelining: 1 });
  let left = amount;
  let unexpected = 0;
  const statuses: Record<number, number> = {};
  const client = async () => {
    while (left-- > 0) {
      const r = path.next();
      try {
        const res = await pool.request({ method: r.method, path: r.path, headers: { ...r.headers, authorization: `Bearer ${r.token}` }, body: r.body });
        await res.body.dump();
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (res.statusCode !== path.expect) unexpected++;
      } catch {
        unexpected++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  await pool.close();
  return { unexpected, statuses };
}

interface Sample { micros: number; rps: number; unexpected: number }
type Target = 'service' | 'floor';
type Measured = Record<PathName, Record<Target, Sample[]>>;

function serviceEnv(database: Record<string, string>, dataDir: string, role: 'all' | 'api'): Record<string, string> {
  return {
    ...database, DATA_DIR: dataDir, NODE_ENV: 'production', JWT_SECRET: 'bench-secret-0123456789-0123456789-0123', ADMIN_TOKEN: ADMIN,
    SERVICE_ROLE: role, LOGIN_LIMIT_PER_EMAIL: '1000', LOGIN_LIMIT_PER_ADDRESS: '1000',
    API_RATE_LIMIT_PER_ACCOUNT: '1000000', API_CONCURRENCY_PER_ACCOUNT: '10000', LOG_LEVEL: 'info',
  };
}

/**
 * One database: fixtures made by an `all` process (it runs the brand commands whose results are read), then an `api`
 * process (`all` on the embedded database) and the floor app, both pinned to CPU 0, warmed up on every path, then ROUNDS
 * rounds of REQUESTS requests per path and process, the two processes taking turns first.
 */
async function measure(database: Record<string, string>) {
  // The embedded database serves one process, which must then also be the executor.
  const role = database.DATABASE_URL ? 'api' : 'all';
  const dataDir = temporaryDir('pbi-bench-cpu-');
  const setup = launch('server/main.ts', serviceEnv(database, dataDir, 'all'));
  const fixtures = await prepare(processClient(await setup.listening, ADMIN), dataDir);
  await setup.stop();
  const answersFile = join(dataDir, 'floor-answers.json');
  writeFileSync(answersFile, JSON.stringify(fixtures.answers));
  const paths = benchPaths(fixtures);
  const service = launch('server/main.ts', serviceEnv(database, dataDir, role), 0);
  const floor = launch('bench/floor-app.ts', { NODE_ENV: 'production', FLOOR_ANSWERS: answersFile }, 0);
  const ports = { service: await service.listening, floor: await floor.listening };
  const pids = { service: service.child.pid!, floor: floor.child.pid! };
  // What a live process has served before it is measured: an account, a contact and a login by mail (they once turned
  // Node's promise hooks on for the rest of the process, through the ORM's flush: see adapters/persistence/detached.ts).
  await integratorLoggedIn(processClient(ports.service, ADMIN), dataDir, 'brand', `cpu-live-${randomUUID().slice(0, 8)}@example.com`, 86_400);
  const idle = { service: 0, floor: 0 };
  for (const target of ['service', 'floor'] as const) {
    const before = cpuMicros(pids[target]);
    await sleep(5000);
    idle[target] = (cpuMicros(pids[target]) - before) / 5;
  }
  for (const [name, path] of Object.entries(paths)) {
    for (const target of ['service', 'floor'] as const) {
      const r = await send(ports[target], path, WARMUP, CONNECTIONS);
      if (r.unexpected) throw new Error(`warm-up of ${name} on the ${target}: ${JSON.stringify(r.statuses)}, ${r.unexpected} unexpected`);
    }
  }
  const measured = Object.fromEntries(Object.keys(paths).map((k) => [k, { service: [], floor: [] }])) as unknown as Measured;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, path] of Object.entries(paths) as [PathName, BenchPath][]) {
      for (const target of round % 2 === 0 ? ['service', 'floor'] as const : ['floor', 'service'] as const) {
        const [before, t0] = [cpuMicros(pids[target]), performance.now()];
        const r = await send(ports[target], path, REQUESTS, CONNECTIONS);
        const micros = (cpuMicros(pids[target]) - before) / REQUESTS;
        const rps = REQUESTS / ((performance.now() - t0) / 1000);
        measured[name][target].push({ micros, rps, unexpected: r.unexpected });
        console.log(`round ${round + 1} ${name} ${target}: ${micros.toFixed(0)} µs/request, ${rps.toFixed(0)}/s, unexpected ${r.unexpected}`);
      }
    }
  }
  await Promise.all([service.stop(), floor.stop()]);
  return { measured, idle, dataDir, fixtures };
}

/**
 * Round trips per request, one client at a time: a fresh `api` process whose DATABASE_URL goes through a counting proxy
 * (bench/pg-round-trips.ts), warmed up, then RT_REQUESTS requests per path; what the process does on its own while idle
 * (counted over 3 s first) is taken out. Then one more request of the path, whose statements are listed.
 */
async function roundTrips(dataDir: string, fixtures: Awaited<ReturnType<typeof prepare>>) {
  const proxy = await roundTripProxy(DATABASE_URL!);
  const service = launch('server/main.ts', serviceEnv({ DATABASE_URL: proxy.url }, dataDir, 'api'), 0);
  const port = await service.listening;
  const paths = benchPaths(fixtures);
  try {
    for (const path of Object.values(paths)) await send(port, path, 50, 1);
    await sleep(1000);
    const idle0 = proxy.count().roundTrips;
    await sleep(3000);
    const idlePerSecond = (proxy.count().roundTrips - idle0) / 3;
    const result = {} as Record<PathName, { roundTrips: number; statements: string[] }>;
    for (const [name, path] of Object.entries(paths) as [PathName, BenchPath][]) {
      const [c0, t0] = [proxy.count().roundTrips, performance.now()];
      const r = await send(port, path, RT_REQUESTS, 1);
      if (r.unexpected) throw new Error(`round trips of ${name}: ${JSON.stringify(r.statuses)}`);
      await sleep(500); // what a request leaves for after its answer (a coalesced NOTIFY) is its own too
      const roundTrips = (proxy.count().roundTrips - c0 - idlePerSecond * ((performance.now() - t0) / 1000)) / RT_REQUESTS;
      const mark = proxy.count().roundTrips;
      await send(port, path, 1, 1);
      await sleep(500);
      result[name] = { roundTrips, statements: proxy.statements(mark) };
      console.log(`round trips ${name}: ${roundTrips.toFixed(2)} per request: ${result[name].statements.join(' | ')}`);
    }
    return { result, idlePerSecond };
  } finally {
    await service.stop();
    await proxy.close();
  }
}

const NAMES: PathName[] = ['command', 'result', 'signed', 'page', 'feed'];
const LABELS = benchPaths({ brandToken: '', partnerToken: '', signatureKey: '', jobs: [''], finished: [], answers: {} as never });
const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '–');
const med = (samples: Sample[], key: keyof Sample) => median(samples.map((s) => s[key]));
const ratioOf = (m: Measured, name: PathName) => median(m[name].service.map((s, i) => s.micros / m[name].floor[i]!.micros));

function table(m: Measured, rt?: Record<PathName, { roundTrips: number }>) {
  const head = `| path | service µs/request | floor µs/request | service / floor | service req/s | floor req/s |${rt ? ' round trips / request |' : ''} unexpected answers |
|---|---:|---:|---:|---:|---:|${rt ? '---:|' : ''}---:|`;
  return [head, ...NAMES.map((name) => `| ${LABELS[name].label} | ${f0(med(m[name].service, 'micros'))} | ${f0(med(m[name].floor, 'micros'))} | **${ratioOf(m, name).toFixed(2)}×** | `
    + `${f0(med(m[name].service, 'rps'))} | ${f0(med(m[name].floor, 'rps'))} |${rt ? ` ${rt[name].roundTrips.toFixed(2)} |` : ''} `
    + `${[...m[name].service, ...m[name].floor].reduce((a, s) => a + s.unexpected, 0)} |`)].join('\n');
}
const rounds = (m: Measured) => NAMES.map((name) => `${name} ${m[name].service.map((s, i) => (s.micros / m[name].floor[i]!.micros).toFixed(2)).join(' / ')}`).join('; ');

const runs: { postgres?: Awaited<ReturnType<typeof measure>> & { rt: Awaited<ReturnType<typeof roundTrips>> }; embedded?: Awaited<ReturnType<typeof measure>> } = {};
if (DATABASE_URL) {
  const run = await measure({ DATABASE_URL });
  runs.postgres = { ...run, rt: await roundTrips(run.dataDir, run.fixtures) };
}
if (EMBEDDED) {
  const dir = temporaryDir('pbi-bench-cpu-pglite-');
  runs.embedded = await measure({ PGLITE_DIR: join(dir, 'pglite') });
}

const pgRun = runs.postgres;
const command = pgRun ? pgRun.measured.command : undefined;
const commandRatio = command ? median(command.service.map((s, i) => s.micros / command.floor[i]!.micros)) : NaN;
const commandTrips = pgRun?.rt.result.command.roundTrips ?? NaN;
const met = (ok: boolean) => (ok ? 'met' : '**not met**');
const version = DATABASE_URL ? (await (async () => {
  const db = new pg.Client({ connectionString: DATABASE_URL });
  await db.connect();
  try { return (await db.query<{ v: string }>(`select current_setting('server_version') as v`)).rows[0]!.v; } finally { await db.end(); }
})()) : '';

await writeSection('CPU per request: five paths against the stack\'s floor', `
Command: \`${LABEL ? `BENCH_LABEL='${LABEL}' ` : ''}${DATABASE_URL ? 'DATABASE_URL=… ' : ''}${EMBEDDED && DATABASE_URL ? 'BENCH_EMBEDDED=1 ' : ''}npm run bench:cpu\` (${new Date().toISOString().slice(0, 10)};
${ROUNDS} rounds of ${REQUESTS} requests per path and process from ${CONNECTIONS} clients, after ${WARMUP} of warm-up each${DATABASE_URL ? `; PostgreSQL ${version}` : ''}).
${codeLine(LABEL)} The machine's 1-minute load average at the start and the end: ${loadAtStart.toFixed(1)} and
${loadAverage().toFixed(1)} (2 fills both cores; other work on this shared machine counts too).

Service: the real service as \`npm start\` runs it once built (dist/, compiled by \`npm run build\` before the run), the floor app compiled by tsc too (bench/tsconfig.peers.json), with \`SERVICE_ROLE=api\` (no command runs in it), \`LOG_LEVEL=info\`, the per-account limits
set high (\`API_RATE_LIMIT_PER_ACCOUNT\`, \`API_CONCURRENCY_PER_ACCOUNT\`) so that nothing is refused. Before it is measured it serves what a live
process has served: an account and a contact created, a login by mail and a token exchanged. Floor: \`bench/floor-app.ts\`,
express 5 + pino-http (every request logged at info by the service's logger) + trpc-to-openapi, one procedure per path with the
service's own zod input and output schemas, answering a fixed answer captured from the service (the same shape and size);
no database, auth, signature check, metrics or fair-use door. Both pinned to CPU 0, running side by side, the load
(undici, closed loop) on CPU 1, PostgreSQL free. CPU is the server process's utime + stime (\`/proc/<pid>/stat\`, ticks of
1/${CLK_TCK} s, all threads) before and after each path's requests, divided by their number; the medians of the rounds,
and the ratio taken within each round.

Data: a brand and a partner logged in through the mail, the partner's configuration (partner-format 1.3.0, a signature
key, no URL), 200 orders of the brand assigned to the partner; 50 brand commands already run (their results are what is
read); the feed holds over 100 events before the first read. Each POST carries a fresh \`_cid\` and the next order; each
signed command an HMAC-SHA256 of its exact bytes in \`x-webhook-signature\`.
${pgRun ? `
On PostgreSQL:

${table(pgRun.measured, pgRun.rt.result)}

Ratios round by round: ${rounds(pgRun.measured)}. Idle CPU (5 s before the warm-up, not taken out): service
${f0(pgRun.idle.service)} µs/s, floor ${f0(pgRun.idle.floor)} µs/s.
Round trips: counted on the wire by a proxy between a fresh \`api\` process and PostgreSQL (\`bench/pg-round-trips.ts\`: one per
simple query and one per Sync of the extended protocol, LISTEN/NOTIFY included), ${RT_REQUESTS} requests per path from one client
after 50 of warm-up, less what the process did while idle (${pgRun.rt.idlePerSecond.toFixed(1)} round trips/s). \`pg_stat_database\`'s
transaction counts were not used: they lag by up to a second and count every session of the database (autovacuum's too).
Forks of the EntityManager per request cannot be seen from outside the process: a test inside it counts them (not this benchmark).
The statements of one more request of each path, in order (the start of each):
${NAMES.map((name) => `- ${LABELS[name].label}: ${pgRun.rt.result[name].statements.map((t) => `\`${t.replace(/`/g, "'")}\``).join(' → ')}`).join('\n')}
` : ''}${runs.embedded ? `
On the embedded database, one \`SERVICE_ROLE=all\` process (the embedded database serves one process): PGlite runs inside it,
so the database's CPU is in the service's figures, and so is the executor's, which runs each accepted RefreshOrder meanwhile;
no wire to count round trips on.

${table(runs.embedded.measured)}

Ratios round by round: ${rounds(runs.embedded.measured)}.
` : ''}
Targets:
- a POST /v3/commands uses one fork and at most three round trips: round trips ${pgRun ? `${commandTrips.toFixed(2)}: ${met(commandTrips <= 3)}` : 'not measured (no PostgreSQL run)'}; forks not measured here
- its CPU is at most 2× the floor app's: ${Number.isFinite(commandRatio) ? `${commandRatio.toFixed(2)}×: ${met(commandRatio <= 2)}` : 'not measured (no PostgreSQL run)'}
`);
console.log('written to docs/BENCHMARKS.md');
for (const dir of temporary) rmSync(dir, { recursive: true, force: true }); // mails, answers, the embedded database (a failed run keeps them)
process.exit(0);
