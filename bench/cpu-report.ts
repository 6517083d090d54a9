// The section bench/cpu-per-request writes in docs/BENCHMARKS.md, from what it measured: a table for each database.
import pg from 'pg';
import { benchPaths, type PathName } from './cpu-fixtures.ts';
import { codeLine, loadAverage, median, writeSection } from './report.ts';

interface Sample {
  micros: number;
  rps: number;
  unexpected: number;
}
type Target = 'service' | 'floor';
export type Measured = Record<PathName, Record<Target, Sample[]>>;

/** What one database's run measured: CPU per request beside the floor, and the idle CPU of both processes. */
interface Run {
  measured: Measured;
  idle: Record<Target, number>;
}
/** Round trips per request, and the statements of one, as the proxy counted them (PostgreSQL only). */
interface RoundTrips {
  result: Record<PathName, { roundTrips: number; statements: string[] }>;
  idlePerSecond: number;
}

/** The bench's settings, and its runs: on PostgreSQL, on the embedded database, or both. */
export interface CpuRuns {
  LABEL: string | undefined;
  DATABASE_URL: string | undefined;
  EMBEDDED: boolean;
  ROUNDS: number;
  REQUESTS: number;
  CONNECTIONS: number;
  WARMUP: number;
  RT_REQUESTS: number;
  CLK_TCK: number;
  loadAtStart: number;
  runs: { postgres?: Run & { rt: RoundTrips }; embedded?: Run };
}

const NAMES: PathName[] = ['command', 'result', 'signed', 'page', 'feed'];
const LABELS = benchPaths({
  brandAccountId: '',
  brandToken: '',
  partnerToken: '',
  signatureKey: '',
  jobs: [''],
  finished: [],
  answers: {} as never,
});
const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '–');
const med = (samples: Sample[], key: keyof Sample) => median(samples.map((s) => s[key]));
const ratioOf = (m: Measured, name: PathName) =>
  median(m[name].service.map((s, i) => s.micros / m[name].floor[i]!.micros));

function table(m: Measured, rt?: Record<PathName, { roundTrips: number }>) {
  const head = `| path | service µs/request | floor µs/request | service / floor | service req/s | floor req/s |${rt ? ' round trips / request |' : ''} unexpected answers |
|---|---:|---:|---:|---:|---:|${rt ? '---:|' : ''}---:|`;
  return [
    head,
    ...NAMES.map(
      (name) =>
        `| ${LABELS[name].label} | ${f0(med(m[name].service, 'micros'))} | ${f0(med(m[name].floor, 'micros'))} | **${ratioOf(m, name).toFixed(2)}×** | ` +
        `${f0(med(m[name].service, 'rps'))} | ${f0(med(m[name].floor, 'rps'))} |${rt ? ` ${rt[name].roundTrips.toFixed(2)} |` : ''} ` +
        `${[...m[name].service, ...m[name].floor].reduce((a, s) => a + s.unexpected, 0)} |`,
    ),
  ].join('\n');
}
const rounds = (m: Measured) =>
  NAMES.map(
    (name) => `${name} ${m[name].service.map((s, i) => (s.micros / m[name].floor[i]!.micros).toFixed(2)).join(' / ')}`,
  ).join('; ');

export async function writeCpuSection({
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
}: CpuRuns) {
  const pgRun = runs.postgres;
  const command = pgRun ? pgRun.measured.command : undefined;
  const commandRatio = command ? median(command.service.map((s, i) => s.micros / command.floor[i]!.micros)) : NaN;
  const commandTrips = pgRun?.rt.result.command.roundTrips ?? NaN;
  const met = (ok: boolean) => (ok ? 'met' : '**not met**');
  const version = DATABASE_URL
    ? await (async () => {
        const db = new pg.Client({ connectionString: DATABASE_URL });
        await db.connect();
        try {
          return (await db.query<{ v: string }>(`select current_setting('server_version') as v`)).rows[0]!.v;
        } finally {
          await db.end();
        }
      })()
    : '';

  await writeSection(
    "CPU per request: five paths against the stack's floor",
    `
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
${
  pgRun
    ? `
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
`
    : ''
}${
  runs.embedded
    ? `
On the embedded database, one \`SERVICE_ROLE=all\` process (the embedded database serves one process): PGlite runs inside it,
so the database's CPU is in the service's figures, and so is the executor's, which runs each accepted RefreshOrder meanwhile;
no wire to count round trips on.

${table(runs.embedded.measured)}

Ratios round by round: ${rounds(runs.embedded.measured)}.
`
    : ''
}
Targets:
- a POST /v3/commands uses one fork and at most three round trips: round trips ${pgRun ? `${commandTrips.toFixed(2)}: ${met(commandTrips <= 3)}` : 'not measured (no PostgreSQL run)'}; forks not measured here
- its CPU is at most 2× the floor app's: ${Number.isFinite(commandRatio) ? `${commandRatio.toFixed(2)}×: ${met(commandRatio <= 2)}` : 'not measured (no PostgreSQL run)'}
`,
  );
  console.log('written to docs/BENCHMARKS.md');
}
