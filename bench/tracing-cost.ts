// npm run bench:tracing — what tracing costs (CONTRACT §13): CPU per request of POST /v3/commands and of a feed page,
// the built service with no OTLP endpoint set against the same with traces exported (http/protobuf, to a sink in this
// process that takes them and answers 200), in the same run, the two interleaved round by round. CPU is read from the
// service process itself (/proc/<pid>/stat) over a fixed number of requests. DATABASE_URL names the PostgreSQL
// database; BENCH_REQUESTS (2000), BENCH_CONNECTIONS (16), BENCH_ROUNDS (3). Writes its section of docs/BENCHMARKS.md.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processClient, type ServiceProcess } from '../tests/support/process.ts';
import { startBuiltService } from './built.ts';
import { benchPaths, type PathName, prepare, send } from './cpu-fixtures.ts';
import { codeLine, loadAverage, median, writeSection } from './report.ts';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) throw new Error('DATABASE_URL must name a PostgreSQL database');
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
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

// The collector: takes every export and answers 200, counting what it got.
let exported = 0;
const sink = createServer((req, res) => {
  req.on('data', (chunk: Buffer) => {
    exported += chunk.length;
  });
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
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
  ...(traced && { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }),
});
const started: ServiceProcess[] = [];
process.on('exit', () => {
  for (const p of started) p.child.kill('SIGKILL');
});

const setup = startBuiltService({ ...env(false), SERVICE_ROLE: 'all' });
started.push(setup);
const paths = benchPaths(await prepare(processClient(await setup.listening, ADMIN), dataDir));
await setup.stop();

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

const load = loadAverage();
const samples: Record<'off' | 'on', Record<PathName, number>[]> = { off: [], on: [] };
for (let round = 0; round < ROUNDS; round++)
  for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
    samples[mode].push(await measure(mode === 'on'));
    console.log(`round ${round + 1} ${mode}: ${JSON.stringify(samples[mode].at(-1))}`);
  }
const m = (mode: 'off' | 'on', name: PathName) => median(samples[mode].map((s) => s[name]));
const rows = PATHS.map((name) => {
  const [off, on] = [m('off', name), m('on', name)];
  const more = Math.round((on / off - 1) * 100);
  return `| ${paths[name].label} | ${Math.round(off)} | ${Math.round(on)} | **+${more} %** |`;
});
await writeSection(
  'Tracing: CPU per request with traces exported against none',
  `Command: \`DATABASE_URL=… npm run bench:tracing\` (${new Date().toISOString().slice(0, 10)}; ${ROUNDS} rounds
of ${REQUESTS} requests per path from ${CONNECTIONS} clients after 500 of warm-up, each round in a fresh process, the
two settings interleaved; load average ${load} at the start).

${codeLine()}

The built service (\`SERVICE_ROLE=api\`, pinned to CPU 0) with no OTLP endpoint set, against the same with
\`OTEL_EXPORTER_OTLP_ENDPOINT\` naming a collector in the bench's process (CPU 1) that takes every export
(http/protobuf, the default batch processor; ${(exported / 1024).toFixed(0)} KiB received over the run). What a traced
request adds: the SDK loaded, its AsyncLocalStorage context across every await, one server span per request, the trace
ids on each log line, and the batched export. With no endpoint set, none of it loads: the request pipeline differs by
one test of a setting when the app is built.

| path | µs / request, no endpoint | µs / request, exported | traced costs |
|---|---:|---:|---:|
${rows.join('\n')}

Issue 37's bound: POST /v3/commands at most 20 % more with tracing on and exporting.`,
);
sink.close();
rmSync(dataDir, { recursive: true, force: true });
console.log('written to docs/BENCHMARKS.md');
