// npm run bench:tracing — what tracing costs (CONTRACT §13): CPU per request of POST /v3/commands and of a feed page
// (a server span each), and the worker's CPU per brand command executed, with its endpoint disabled (a consumer span)
// and with its two webhooks delivered (and a client span each: tracing-worker.ts); the built service with no OTLP
// endpoint set against the same with traces exported (http/protobuf, to a sink in this process that takes them and
// answers 200), in the same run, the two interleaved round by round. CPU is read from the process itself
// (/proc/<pid>/stat). DATABASE_URL names a PostgreSQL server (the bench makes a database of its own there, and drops
// it at the end); BENCH_REQUESTS (2000), BENCH_CONNECTIONS (16), BENCH_ROUNDS (3), BENCH_WORKER_COMMANDS (1000).
// Writes its section of docs/BENCHMARKS.md.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { processClient, type ServiceProcess } from '../tests/support/process.ts';
import { startBuiltService } from './built.ts';
import { benchPaths, type PathName, prepare, send } from './cpu-fixtures.ts';
import { codeLine, loadAverage, median, writeSection } from './report.ts';
import { type WorkerBench, workerMicrosPerCommand } from './tracing-worker.ts';

if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL must name a PostgreSQL database');
// A database of its own on that server, dropped at the end: what other runs left queued would be worked on meanwhile.
const serverUrl = new URL(process.env.DATABASE_URL);
const benchDatabase = `pbi_bench_tracing_${process.pid}`;
const DATABASE_URL = Object.assign(new URL(serverUrl), { pathname: `/${benchDatabase}` }).toString();
const admin = new pg.Client({ connectionString: serverUrl.toString() });
await admin.connect();
await admin.query(`create database ${benchDatabase}`);
await admin.end();
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WORKER_COMMANDS = Number(process.env.BENCH_WORKER_COMMANDS ?? 1000);
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
const ADMIN = 'bench-admin-token-0123456789';
const PATHS: PathName[] = ['command', 'feed'];
try {
  execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
} catch {
  /* unpinned */
}

const cpuMicros = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLK_TCK;
};

// The collector: takes every export and answers 200, counting what it got; and the brand's webhook receiver (/hooks).
let exported = 0;
let webhooks = 0;
const sink = createServer((req, res) => {
  const hook = req.url === '/hooks';
  req.on('data', (chunk: Buffer) => {
    if (!hook) exported += chunk.length;
  });
  req.on('end', () => {
    if (hook) webhooks += 1;
    res.writeHead(200, { 'content-type': hook ? 'text/plain' : 'application/x-protobuf' }).end();
  });
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${(sink.address() as { port: number }).port}`;

const dataDir = mkdtempSync(join(tmpdir(), 'pbi-bench-tracing-'));
const env = (traced: boolean): Record<string, string> => ({
  DATABASE_URL,
  DATA_DIR: dataDir,
  NODE_ENV: 'production',
  JWT_SECRET: 'bench-secret-0123456789-0123456789-0123',
  ADMIN_TOKEN: ADMIN,
  SERVICE_ROLE: 'api',
  API_RATE_LIMIT_PER_ACCOUNT: '1000000',
  API_CONCURRENCY_PER_ACCOUNT: '10000',
  LOG_LEVEL: 'info',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
  ...(traced && { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }),
});
const started: ServiceProcess[] = [];
// However the run ends (a failure, Ctrl-C): the services killed, then the database dropped with psql, since nothing
// asynchronous runs at exit. The password goes in psql's environment, never on its command line or in an error.
process.on('exit', () => {
  for (const p of started) p.child.kill('SIGKILL');
  const password = decodeURIComponent(serverUrl.password);
  const url = Object.assign(new URL(serverUrl), { password: '' }).toString();
  try {
    execFileSync('psql', [url, '-qc', `drop database if exists ${benchDatabase} with (force)`], {
      stdio: 'ignore',
      env: { ...process.env, ...(password && { PGPASSWORD: password }) },
    });
  } catch {
    console.error(`the bench's database ${benchDatabase} could not be dropped: drop it by hand`);
  }
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

const setup = startBuiltService({ ...env(false), SERVICE_ROLE: 'all' });
started.push(setup);
const setupClient = processClient(await setup.listening, ADMIN);
const fixtures = await prepare(setupClient, dataDir);
const paths = benchPaths(fixtures);
await setup.stop();

const load = loadAverage();
// The worker first: the API rounds below leave their commands accepted (nobody runs them).
const api = startBuiltService(env(false), { cpu: 1 });
started.push(api);
const apiClient = processClient(await api.listening, ADMIN);
const workerBench: WorkerBench = {
  databaseUrl: DATABASE_URL,
  env,
  apiPort: await api.listening,
  command: paths.command,
  received: () => webhooks,
  // The brand's endpoint on, or disabled: a disabled endpoint gets no deliveries, and its commands no client spans.
  webhooks: async (on) =>
    void (await apiClient.admin('webhookConfigs.upsert', {
      accountId: fixtures.brandAccountId,
      scope: 'brand',
      url: `${endpoint}/hooks`,
      transformer: 'default',
      version: '1.3.0',
      enabled: on,
    })),
  started,
};
type Kind = 'alone' | 'delivered';
const workerSamples: Record<'off' | 'on', Record<Kind, number>[]> = { off: [], on: [] };
for (let round = 0; round < ROUNDS; round++)
  for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
    const micros = (delivered: boolean) =>
      workerMicrosPerCommand(workerBench, mode === 'on', WORKER_COMMANDS, CLK_TCK, delivered);
    // Which of the two goes first changes round by round too.
    const sample = {} as Record<Kind, number>;
    for (const delivered of round % 2 === 0 ? [false, true] : [true, false])
      sample[delivered ? 'delivered' : 'alone'] = await micros(delivered);
    workerSamples[mode].push(sample);
    console.log(`worker round ${round + 1} ${mode}: ${JSON.stringify(workerSamples[mode].at(-1))} µs a command`);
  }
await api.stop();
const w = (mode: 'off' | 'on', kind: Kind) => median(workerSamples[mode].map((s) => s[kind]));

/** µs of the service's CPU per request of each path, in a fresh process. */
async function measure(traced: boolean): Promise<Record<PathName, number>> {
  const service = startBuiltService(env(traced), { cpu: 0 });
  started.push(service);
  try {
    const port = await service.listening;
    const pid = service.child.pid!;
    for (const name of PATHS) await send(port, paths[name], 500, CONNECTIONS); // warm-up
    const out = {} as Record<PathName, number>;
    for (const name of PATHS) {
      const before = cpuMicros(pid);
      const { unexpected } = await send(port, paths[name], REQUESTS, CONNECTIONS);
      out[name] = (cpuMicros(pid) - before) / REQUESTS;
      if (unexpected > 0) throw new Error(`${unexpected} unexpected answers on ${name}`);
    }
    return out;
  } finally {
    await service.stop();
  }
}

const samples: Record<'off' | 'on', Record<PathName, number>[]> = { off: [], on: [] };
for (let round = 0; round < ROUNDS; round++)
  for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
    samples[mode].push(await measure(mode === 'on'));
    console.log(`round ${round + 1} ${mode}: ${JSON.stringify(samples[mode].at(-1))}`);
  }
const m = (mode: 'off' | 'on', name: PathName) => median(samples[mode].map((s) => s[name]));
const row = (label: string, kind: string, off: number, on: number) => {
  const more = Math.round((on / off - 1) * 100);
  return `| ${label} | ${kind} | ${Math.round(off)} | ${Math.round(on)} | ${Math.round(on - off)} | **+${more} %** |`;
};
const rows = [
  ...PATHS.map((name) => row(paths[name].label, 'one server span', m('off', name), m('on', name))),
  row(
    'worker: a RefreshOrder executed (its endpoint disabled)',
    'one consumer span',
    w('off', 'alone'),
    w('on', 'alone'),
  ),
  row(
    'worker: one webhook delivered (half the difference)',
    'one client span',
    (w('off', 'delivered') - w('off', 'alone')) / 2,
    (w('on', 'delivered') - w('on', 'alone')) / 2,
  ),
];
await writeSection(
  'Tracing: CPU per request and per command, traces exported against none',
  `Command: \`DATABASE_URL=… npm run bench:tracing\` (${new Date().toISOString().slice(0, 10)}; ${ROUNDS} rounds
of ${REQUESTS} requests per path from ${CONNECTIONS} clients after 500 of warm-up, and of ${WORKER_COMMANDS} commands
for the worker, each round in a fresh process, the two settings interleaved; load average ${load} at the start).

${codeLine()}

The built service (\`SERVICE_ROLE=api\`, pinned to CPU 0) with no OTLP endpoint set, against the same with
\`OTEL_EXPORTER_OTLP_ENDPOINT\` naming a collector in the bench's process (CPU 1) that takes every export
(http/protobuf, the default batch processor; ${(exported / 1024).toFixed(0)} KiB received over the run). And the built
worker (\`SERVICE_ROLE=worker\`, CPU 0), each round from idle, twice: an untraced API process accepts the commands,
and the worker's CPU is read until every command has run with the brand's endpoint disabled (no deliveries), then
until the brand's receiver (in the bench's process) has both webhooks of every command. What tracing adds: the SDK
loaded, the spans (their context handed on by hand, with no context manager), the trace ids on
the request's log lines, and the batched export. With no endpoint set, none of it loads: a request's path differs from
a build without the code by one WeakMap lookup when its context is made (no span, no mixin, no listener).

| work | spans | µs, no endpoint | µs, exported | µs more | traced costs |
|---|---|---:|---:|---:|---:|
${rows.join('\n')}

Issue 37's bound: POST /v3/commands at most 20 % more with tracing on and exporting.`,
);
sink.close();
rmSync(dataDir, { recursive: true, force: true });
console.log('written to docs/BENCHMARKS.md');
