// npm run bench:read-replicas — partners polling page 1 of their listing, with one streaming read replica (CONTRACT
// §12) against the primary alone, in the same run. Makes its own primary and replica with PostgreSQL's tools
// (tests/support/temp-replica.ts), fills the primary with `seed:bench` (BENCH_JOBS jobs; a 20,000-job scope), then
// measures the built service in fresh processes, the two settings interleaved round by round. Writes its section of
// docs/BENCHMARKS.md.
//
// The service runs pinned to CPU 0 and the load generator (autocannon, in this process) on CPU 1; both PostgreSQL
// servers are left free. What it reports beside the rate: each server's CPU per answered poll, and the reads each
// database served (db_reads_total).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { mailedToken, processClient, type ServiceProcess } from '../tests/support/process.ts';
import { startReplicaPair } from '../tests/support/temp-replica.ts';
import { startBuiltService } from './built.ts';
import { codeLine, loadAverage, median, writeSection } from './report.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const JOBS = Number(process.env.BENCH_JOBS ?? 200_001);
const CONNECTIONS = 16;
const PATH = '/v3/partner-orders/paginated?page=1&pageSize=50';
const ADMIN = 'bench-admin-token-0123456789';
try {
  execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
} catch {
  /* unpinned */
}

/** CPU seconds of one PostgreSQL server: its postmaster (found by its port), its live children and the reaped ones. */
function serverCpuSeconds(port: number): number {
  const stat = (pid: string) => {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  };
  const pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  const postmaster = pids.find((pid) => {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return argv[0]?.endsWith('postgres') && argv.join(' ').includes(`-p ${port} `);
    } catch {
      return false;
    }
  });
  if (!postmaster) return NaN;
  const own = stat(postmaster);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const pid of pids) {
    try {
      const fields = stat(pid);
      if (fields[1] === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      /* gone */
    }
  }
  return ticks / 100;
}

const pair = await startReplicaPair();
process.on('exit', () => pair.destroySync());
const primaryUrl = pair.primary.url('pbi');
const dataDir = mkdtempSync(join(tmpdir(), 'pbi-bench-replicas-'));
const seeded = performance.now();
execFileSync(
  process.execPath,
  ['--import', 'tsx', 'server/seed-bench.ts', '--jobs', String(JOBS), '--partners', '2000', '--big-scope', '20000'],
  { env: { ...process.env, DATABASE_URL: primaryUrl, DATA_DIR: dataDir }, stdio: 'ignore' },
);
execFileSync('psql', [primaryUrl, '-qc', 'vacuum analyze'], { stdio: 'ignore' });
await pair.caughtUp();
console.log(`seeded ${JOBS} jobs and replicated in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);

const env = (withReplica: boolean): Record<string, string> => ({
  DATABASE_URL: primaryUrl,
  ...(withReplica && { DATABASE_REPLICA_URL: pair.replica.url('pbi') }),
  DATA_DIR: dataDir,
  NODE_ENV: 'production',
  SERVICE_ROLE: 'api',
  ADMIN_TOKEN: ADMIN,
  JWT_SECRET: 'bench-secret-0123456789-0123456789-0123',
  API_RATE_LIMIT_PER_ACCOUNT: '1000000',
  API_CONCURRENCY_PER_ACCOUNT: '10000',
});

// The seeded master's contact logs in through the mail, as an integrator does.
let token: string;
{
  const service = startBuiltService(env(false));
  const client = processClient(await service.listening, ADMIN);
  await client.rest('/v3/auth/login', { method: 'POST', body: '{"email":"bench-master@example.com"}' });
  const refresh = await mailedToken(dataDir, 'bench-master@example.com');
  const res = await client.rest('/v3/auth/access-token', {
    method: 'POST',
    body: '{"expires_after":86400}',
    token: refresh,
  });
  token = ((await res.json()) as { access_token: string }).access_token;
  await service.stop();
}

type Sample = {
  rps: number;
  p50: number;
  p99: number;
  primaryUs: number;
  replicaUs: number;
  reads: string;
  non2xx: number;
};
const metricsText = async (port: number) =>
  (await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();

async function measure(withReplica: boolean): Promise<Sample> {
  const service: ServiceProcess = startBuiltService(env(withReplica), { cpu: 0 });
  try {
    const port = await service.listening;
    for (
      const deadline = Date.now() + 10_000;
      withReplica && !/^db_replica_up\{[^}]*\} 1$/m.test(await metricsText(port));
    ) {
      if (Date.now() > deadline) throw new Error('the replica was not read within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const url = `http://127.0.0.1:${port}${PATH}`;
    const run = (duration: number) =>
      new Promise<autocannon.Result>((resolve, reject) =>
        autocannon(
          { url, connections: CONNECTIONS, duration, headers: { authorization: `Bearer ${token}` } },
          (err, r) => (err ? reject(err) : resolve(r)),
        ),
      );
    await run(2); // warm-up
    const [primary0, replica0] = [serverCpuSeconds(pair.primary.port), serverCpuSeconds(pair.replica.port)];
    const result = await run(SECONDS);
    const [primary1, replica1] = [serverCpuSeconds(pair.primary.port), serverCpuSeconds(pair.replica.port)];
    const answered = result.requests.total;
    const reads = [...(await metricsText(port)).matchAll(/^db_reads_total\{database="([^"]+)"\} (\d+)/gm)]
      .map((m) => `${m[1] === 'primary' ? 'primary' : 'replica'} ${m[2]}`)
      .join(', ');
    return {
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      primaryUs: ((primary1 - primary0) / answered) * 1e6,
      replicaUs: ((replica1 - replica0) / answered) * 1e6,
      reads: reads || 'none counted',
      non2xx: result.non2xx,
    };
  } finally {
    await service.stop();
  }
}

const load = loadAverage();
const samples: Record<'alone' | 'replica', Sample[]> = { alone: [], replica: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const mode of round % 2 === 0 ? (['alone', 'replica'] as const) : (['replica', 'alone'] as const)) {
    const sample = await measure(mode === 'replica');
    samples[mode].push(sample);
    console.log(`round ${round + 1} ${mode}: ${JSON.stringify(sample)}`);
  }
}

const row = (mode: 'alone' | 'replica', label: string) => {
  const s = samples[mode];
  const m = (f: (x: Sample) => number) => median(s.map(f));
  const cells = [
    label,
    Math.round(m((x) => x.rps)).toLocaleString('en-US'),
    `${m((x) => x.p50)} / ${m((x) => x.p99)}`,
    Math.round(m((x) => x.primaryUs)),
    Math.round(m((x) => x.replicaUs)),
    s.map((x) => x.reads).join('; '),
    s.reduce((n, x) => n + x.non2xx, 0),
  ];
  return `| ${cells.join(' | ')} |`;
};
const HEADER = [
  'setting',
  'polls/s',
  'latency p50 / p99 ms',
  'primary CPU µs / poll',
  'replica CPU µs / poll',
  'reads served (db_reads_total, each round)',
  'non-2xx',
];
const ratio =
  median(samples.alone.map((x) => x.primaryUs)) / Math.max(1, median(samples.replica.map((x) => x.primaryUs)));
await writeSection(
  'Read replicas: polling page 1 with one replica against the primary alone',
  `Command: \`npm run bench:read-replicas\` (${new Date().toISOString().slice(0, 10)}; ${ROUNDS} rounds of ${SECONDS} s
each setting, interleaved, after 2 s of warm-up; load average ${load} at the start).

${codeLine()}

A primary and one streaming replica made by the bench (PostgreSQL 15, \`initdb\`, then \`pg_basebackup -R -X stream\`,
default settings but the replica's \`fsync=off\`, as the test fixture makes it; both on this machine),
${JOBS.toLocaleString('en-US')} jobs over 2,000 partners by \`seed:bench\`; the seeded master (40 children, 20,000 jobs
in scope) polls \`GET ${PATH}\` over ${CONNECTIONS} connections (autocannon, CPU 1). The service: one built \`api\`
process pinned to CPU 0, fresh each round, with \`DATABASE_REPLICA_URL\` set (and \`REPLICA_MAX_LAG_MS\` at its
default 2000) or not. CPU of each server per answered poll: its postmaster and every process of it over the timed run.

| ${HEADER.join(' | ')} |
|---|---:|---:|---:|---:|---|---:|
${row('alone', 'primary alone')}
${row('replica', 'with one replica')}

With the replica, the primary spends ${ratio.toFixed(1)}× less CPU per poll: its share is the caller's token and the
partner's scope; the page itself is read on the replica. On this 2-core machine both servers and the service share the
cores, so the rate shows no more than that the replica costs the poll nothing; on hosts of their own, the primary's
freed CPU is what a replica buys.`,
);
rmSync(dataDir, { recursive: true, force: true });
await pair.destroy();
console.log('written to docs/BENCHMARKS.md');
