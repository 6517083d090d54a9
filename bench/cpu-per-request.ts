// npm run bench:cpu — CPU time per request of five paths of the real service, each beside the same stack's floor
// (bench/floor-app.ts) in the same run, and the round trips to PostgreSQL each request makes. CPU is read from the
// server process itself (utime + stime in /proc/<pid>/stat) over a fixed number of requests: on a shared machine that
// holds far steadier than requests per second. DATABASE_URL names the PostgreSQL database (the service migrates it);
// BENCH_EMBEDDED=1 adds a run on the embedded database (alone when there is no DATABASE_URL). BENCH_REQUESTS (2000),
// BENCH_CONNECTIONS (16), BENCH_ROUNDS (3), BENCH_LABEL (what code this is, written into the section). BENCH_PATHS
// (e.g. `signed,result`) measures only those paths and writes no section: a quick look at one change.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { integratorLoggedIn, processClient, type ServiceProcess } from '../tests/support/process.ts';
import { startBuiltPeer, startBuiltService } from './built.ts';
import { type BenchPath, benchPaths, type Fixtures, type PathName, prepare, send } from './cpu-fixtures.ts';
import { type Measured, writeCpuSection } from './cpu-report.ts';
import { roundTripProxy } from './pg-round-trips.ts';
import { loadAverage } from './report.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const EMBEDDED = process.env.BENCH_EMBEDDED === '1' || !DATABASE_URL;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP = 500;
const RT_REQUESTS = 200;
const LABEL = process.env.BENCH_LABEL;
// BENCH_NODE_ARGS: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, to see where the measured service spends its time.
const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
const ONLY = process.env.BENCH_PATHS?.split(',').filter(Boolean);
const pathsOf = (fixtures: Fixtures) =>
  Object.fromEntries(Object.entries(benchPaths(fixtures)).filter(([name]) => !ONLY || ONLY.includes(name))) as Record<
    PathName,
    BenchPath
  >;
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
try {
  execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
} catch {
  /* unpinned */
}

const ADMIN = 'bench-admin-token-0123456789';
const loadAtStart = loadAverage();
const started: ServiceProcess[] = [];
process.on('exit', () => {
  for (const proc of started) proc.child.kill('SIGKILL');
});
// The service as deployed (dist/), the floor app compiled the same way (bench/built.ts).
const launch = (
  script: 'server/main.ts' | 'bench/floor-app.ts',
  env: Record<string, string>,
  cpu?: number,
  args: string[] = [],
) => {
  const proc =
    script === 'server/main.ts'
      ? startBuiltService(env, { cpu, nodeArgs: args })
      : startBuiltPeer(script, env, { cpu });
  started.push(proc);
  return proc;
};
const temporary: string[] = [];
const temporaryDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temporary.push(dir);
  return dir;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU time used so far by a process, all its threads, in µs. */
function cpuMicros(pid: number) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLK_TCK;
}

function serviceEnv(database: Record<string, string>, dataDir: string, role: 'all' | 'api'): Record<string, string> {
  return {
    ...database,
    DATA_DIR: dataDir,
    NODE_ENV: 'production',
    JWT_SECRET: 'bench-secret-0123456789-0123456789-0123',
    ADMIN_TOKEN: ADMIN,
    SERVICE_ROLE: role,
    LOGIN_LIMIT_PER_EMAIL: '1000',
    LOGIN_LIMIT_PER_ADDRESS: '1000',
    API_RATE_LIMIT_PER_ACCOUNT: '1000000',
    API_CONCURRENCY_PER_ACCOUNT: '10000',
    LOG_LEVEL: 'info',
  };
}

/**
 * One database: fixtures made by an `all` process (it runs the brand commands whose results are read), then an `api`
 * process (`all` on the embedded database) and the floor app, both pinned to CPU 0, warmed up on every path, then
 * ROUNDS rounds of REQUESTS requests per path and process, the two processes taking turns first.
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
  const paths = pathsOf(fixtures);
  const service = launch('server/main.ts', serviceEnv(database, dataDir, role), 0, nodeArgs);
  const floor = launch('bench/floor-app.ts', { NODE_ENV: 'production', FLOOR_ANSWERS: answersFile }, 0);
  const ports = { service: await service.listening, floor: await floor.listening };
  const pids = { service: service.child.pid!, floor: floor.child.pid! };
  // What a live process has served before it is measured: an account, a contact and a login by mail (they once turned
  // Node's promise hooks on for the rest of the process, through the ORM's flush: see
  // adapters/persistence/detached.ts).
  await integratorLoggedIn(
    processClient(ports.service, ADMIN),
    dataDir,
    'brand',
    `cpu-live-${randomUUID().slice(0, 8)}@example.com`,
    86_400,
  );
  const idle = { service: 0, floor: 0 };
  for (const target of ['service', 'floor'] as const) {
    const before = cpuMicros(pids[target]);
    await sleep(5000);
    idle[target] = (cpuMicros(pids[target]) - before) / 5;
  }
  for (const [name, path] of Object.entries(paths)) {
    for (const target of ['service', 'floor'] as const) {
      const r = await send(ports[target], path, WARMUP, CONNECTIONS);
      if (r.unexpected)
        throw new Error(
          `warm-up of ${name} on the ${target}: ${JSON.stringify(r.statuses)}, ${r.unexpected} unexpected`,
        );
    }
  }
  const measured = Object.fromEntries(
    Object.keys(paths).map((k) => [k, { service: [], floor: [] }]),
  ) as unknown as Measured;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, path] of Object.entries(paths) as [PathName, BenchPath][]) {
      for (const target of round % 2 === 0 ? (['service', 'floor'] as const) : (['floor', 'service'] as const)) {
        const [before, t0] = [cpuMicros(pids[target]), performance.now()];
        const r = await send(ports[target], path, REQUESTS, CONNECTIONS);
        const micros = (cpuMicros(pids[target]) - before) / REQUESTS;
        const rps = REQUESTS / ((performance.now() - t0) / 1000);
        measured[name][target].push({ micros, rps, unexpected: r.unexpected });
        console.log(
          `round ${round + 1} ${name} ${target}: ${micros.toFixed(0)} µs/request, ${rps.toFixed(0)}/s, unexpected ${r.unexpected}`,
        );
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
  const paths = pathsOf(fixtures);
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
      const roundTrips =
        (proxy.count().roundTrips - c0 - idlePerSecond * ((performance.now() - t0) / 1000)) / RT_REQUESTS;
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

const runs: {
  postgres?: Awaited<ReturnType<typeof measure>> & { rt: Awaited<ReturnType<typeof roundTrips>> };
  embedded?: Awaited<ReturnType<typeof measure>>;
} = {};
if (DATABASE_URL) {
  const run = await measure({ DATABASE_URL });
  runs.postgres = { ...run, rt: await roundTrips(run.dataDir, run.fixtures) };
}
if (EMBEDDED) {
  const dir = temporaryDir('pbi-bench-cpu-pglite-');
  runs.embedded = await measure({ PGLITE_DIR: join(dir, 'pglite') });
}

if (!ONLY)
  await writeCpuSection({
    LABEL,
    DATABASE_URL,
    EMBEDDED,
    ROUNDS,
    REQUESTS,
    CONNECTIONS,
    WARMUP,
    RT_REQUESTS,
    CLK_TCK,
    loadAtStart,
    runs,
  });
for (const dir of temporary) rmSync(dir, { recursive: true, force: true }); // mails, answers, the embedded database (a failed run keeps them)
process.exit(0);
