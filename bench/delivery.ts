// npm run bench:delivery — webhook deliveries per second from the outbox to a local receiver, at 16 and 64 in flight,
// against a bare undici sender posting the same signed payloads to the same receiver, with the CPU each side spends per
// delivery; then commit-to-receipt latency at a steady 500 events/s. Needs DATABASE_URL (any database: the worker
// migrates it; the bench adds its own brands). Writes its section of docs/BENCHMARKS.md.
//
// The worker runs as `npm start` runs it once built, and the bare sender compiled (bench/built.ts), both pinned to CPU
// 0; the receiver and this process to CPU 1; PostgreSQL is free. The events go to as many endpoints as the setting
// needs for its sends at WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT's default of 4 (4 endpoints at 16, 16 at 64), all on the
// receiver.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type ServiceProcess, startScript } from '../tests/support/process.ts';
import { startBuiltPeer, startBuiltService } from './built.ts';
import { describeSteadyLoad, runSteadyLoad } from './delivery-steady.ts';
import {
  codeLine,
  cpuSeconds,
  loadAverage,
  median,
  met,
  postgresCpuSeconds,
  secondsSetting,
  writeSection,
} from './report.ts';
import { DELIVERY_TABLES, vacuumInPlaceOfAutovacuum as vacuum } from './upkeep.ts';

// What the service's work announcer sends after a commit (adapters/persistence/wake-ups/announcer.ts).
const ANNOUNCE = "select set_config('synchronous_commit', 'off', true), pg_notify('pbi_work', 'deliveries')";
const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) throw new Error('DATABASE_URL must name a PostgreSQL database');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const BATCH = Number(process.env.BENCH_EVENTS ?? 20_000);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = secondsSetting('BENCH_SECONDS', 20);
/** The steady load's first seconds, reported apart: a worker just started warms up (its JIT, its connections). */
const WARMUP_SECONDS = secondsSetting('BENCH_WARMUP_SECONDS', 6);
const PER_ENDPOINT = 4;
const SETTINGS = [16, 64] as const;
type Setting = (typeof SETTINGS)[number];
try {
  execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
} catch {
  /* unpinned */
}
const loadAtStart = loadAverage();

const started: ServiceProcess[] = [];
// BENCH_NODE_ARGS: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, to see where the worker spends its time.
const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
const keep = (proc: ServiceProcess) => {
  started.push(proc);
  return proc;
};
process.on('exit', () => {
  for (const proc of started) proc.child.kill('SIGKILL');
});

const receiver = keep(startScript('bench/receiver.ts', {}, { cpu: 1 }));
const target = `http://127.0.0.1:${await receiver.listening}/hooks`;
const receiverGet = async <T>(path: string) =>
  (await (await fetch(`http://127.0.0.1:${new URL(target).port}${path}`)).json()) as T;

const startWorker = async (inFlight: number) => {
  const proc = keep(
    startBuiltService(
      {
        DATABASE_URL,
        SERVICE_ROLE: 'worker',
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
        WEBHOOK_MAX_IN_FLIGHT: String(inFlight),
      },
      { cpu: 0, nodeArgs },
    ),
  );
  await proc.listening;
  return proc;
};
// The schema, by a worker that starts and stops; then brands whose endpoints are the receiver, signed with a key.
await (await startWorker(16)).stop();
const db = new pg.Pool({ connectionString: DATABASE_URL, max: 8 });
const endpoints: { brandId: string; endpointId: string }[] = [];
for (let n = 0; n < Math.max(...SETTINGS) / PER_ENDPOINT; n++) {
  const brandId = randomUUID();
  const endpointId = randomUUID();
  const now = new Date();
  await db.query(`insert into accounts (id, name, role, parent_id, created_at) values ($1, $2, 'brand', null, $3)`, [
    brandId,
    `Bench brand ${n}`,
    now,
  ]);
  await db.query(
    `insert into webhook_configs (id, account_id, scope, url, transformer, version, signature_key, enabled, created_at, updated_at)
    values ($1, $2, 'brand', $3, 'default', '1.3.0', 'bench-signing-key-0123456789', true, $4, $4)`,
    [endpointId, brandId, `${target}/${n}`, now],
  );
  endpoints.push({ brandId, endpointId });
}
const endpointsOf = (inFlight: Setting) => endpoints.slice(0, inFlight / PER_ENDPOINT);
const {
  rows: [server],
} = await db.query<{ server_version: string; autovacuum: string }>(
  `select current_setting('server_version') as server_version, current_setting('autovacuum') as autovacuum`,
);
const [serverVersion, autovacuum] = [server!.server_version, server!.autovacuum];

// An OrderStatusEvent-sized payload (~0.9 KB), one order per event: the throughput of independent orders.
const PAYLOAD = `json_build_object('_eid', id, '_type', 'OrderStatusEvent', '_v', '1.3.0', 'orderId', 'bench-' || n, 'orderNumber', 'O-' || lpad(n::text, 10, '0'),
  'status', 'appointment_confirmed', 'customer', json_build_object('email', 'c' || n || '@example.com', 'firstName', 'Alex', 'lastName', 'Sample'),
  'shippingAddress', json_build_object('street', 'Hauptstraße', 'houseNumber', '12', 'postalCode', '10115', 'city', 'Berlin', 'countryCode', 'DE'),
  'products', json_build_array(json_build_object('sku', 'WB-11KW', 'name', 'Wallbox 11 kW', 'quantity', 1)), 'notes', repeat('x', 500))`;
// Events n of a batch, each for endpoint n mod the endpoints given, with its delivery, as the outbox writes them.
const WRITE = `
  with fresh as (select gen_random_uuid() as id, n, ($2::uuid[])[1 + n % cardinality($2::uuid[])] as endpoint_id,
      ($3::uuid[])[1 + n % cardinality($3::uuid[])] as account_id from generate_series($1::int, $5::int) n),
    written as (
      insert into events (id, account_id, scope, type, order_id, payload, endpoint_id, created_at)
      select id, account_id, 'brand', 'OrderStatusEvent', 'bench-' || n, ${PAYLOAD}, endpoint_id, $4 from fresh order by n
      returning id, order_id, endpoint_id, account_id, seq)
  insert into deliveries (id, event_id, endpoint_id, account_id, order_id, status, attempts, next_attempt_at, created_at, updated_at)
  select gen_random_uuid(), id, endpoint_id, account_id, order_id, 'pending', 0, $4, $4, $4 from written order by seq
  returning event_id`;
const writeValues = (first: number, last: number, to: typeof endpoints) => [
  first,
  to.map((e) => e.endpointId),
  to.map((e) => e.brandId),
  new Date(),
  last,
];

/** `count` events with their deliveries, committed at once: answers the time of the commit (`committed` runs then). */
async function prefill(count: number, to: typeof endpoints, committed: () => void) {
  const client = await db.connect();
  try {
    await client.query('begin');
    await client.query(WRITE, writeValues(1, count, to));
    await client.query('commit');
    committed();
    const at = performance.now();
    await client.query(ANNOUNCE);
    return at;
  } finally {
    client.release();
  }
}

async function untilReceived(count: number, timeoutMs = 180_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const { distinct } = await receiverGet<{ distinct: number }>('/count');
    if (distinct >= count) return performance.now();
    if (performance.now() > deadline) throw new Error(`only ${distinct} of ${count} arrived`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Round {
  service: number;
  bare: number;
  workerUs: number;
  postgresUs: number;
  bareUs: number;
}
const rounds: Record<Setting, Round[]> = { 16: [], 64: [] };
const payloadFile = join(mkdtempSync(join(tmpdir(), 'pbi-bench-delivery-')), 'payloads.json');
for (let round = 0; round < ROUNDS; round++) {
  for (const inFlight of SETTINGS) {
    await vacuum(db, DELIVERY_TABLES);
    await receiverGet('/stats');
    const worker = await startWorker(inFlight);
    // CPU from the commit on: writing the events is the writers' cost, not the delivery's.
    let [worker0, postgres0] = [0, 0];
    const t0 = await prefill(BATCH, endpointsOf(inFlight), () => {
      [worker0, postgres0] = [cpuSeconds(worker.child.pid!), postgresCpuSeconds()];
    });
    const t1 = await untilReceived(BATCH);
    const [workerCpu, postgresCpu] = [cpuSeconds(worker.child.pid!) - worker0, postgresCpuSeconds() - postgres0];
    await worker.stop();
    const service = BATCH / ((t1 - t0) / 1000);

    // The bare peer sends the same payloads (the last batch's events) to the same receiver.
    const { rows } = await db.query<{ id: string; body: string }>(
      `select e.id, e.payload::text as body from events e where e.account_id = any($1) order by e.seq desc limit $2`,
      [endpoints.map((e) => e.brandId), BATCH],
    );
    writeFileSync(payloadFile, JSON.stringify(rows));
    await receiverGet('/stats');
    const bare = keep(
      startBuiltPeer(
        'bench/bare-sender.ts',
        { TARGET: `${target}/0`, PAYLOADS: payloadFile, IN_FLIGHT: String(inFlight) },
        { cpu: 0 },
      ),
    );
    await bare.exited;
    const {
      sent,
      seconds,
      cpuSeconds: bareCpu,
    } = JSON.parse(/\{"sent".*\}/.exec(bare.output())![0]) as { sent: number; seconds: number; cpuSeconds: number };
    const result = {
      service,
      bare: sent / seconds,
      workerUs: (workerCpu * 1e6) / BATCH,
      postgresUs: (postgresCpu * 1e6) / BATCH,
      bareUs: (bareCpu * 1e6) / sent,
    };
    rounds[inFlight].push(result);
    console.log(
      `in flight ${inFlight}: service ${service.toFixed(0)}/s (worker ${result.workerUs.toFixed(0)} µs + PostgreSQL ${result.postgresUs.toFixed(0)} µs` +
        ` of CPU a delivery), bare ${result.bare.toFixed(0)}/s (${result.bareUs.toFixed(0)} µs)`,
    );
  }
}

// Steady load: events written one per transaction (with the NOTIFY every writer sends after its commit), spread over
// the 16 endpoints.
await vacuum(db, DELIVERY_TABLES);
await receiverGet('/stats');
const worker = await startWorker(64);
const steadyTo = endpointsOf(64);
const steady = await runSteadyLoad({
  rate: RATE,
  warmupSeconds: WARMUP_SECONDS,
  seconds: SECONDS,
  async write(i) {
    const client = await db.connect();
    try {
      await client.query('begin');
      const { rows } = await client.query<{ event_id: string }>(
        WRITE,
        writeValues(BATCH + i, BATCH + i, [steadyTo[i % steadyTo.length]!]),
      );
      await client.query('commit');
      const at = Date.now();
      await client.query(ANNOUNCE);
      return { id: rows[0]!.event_id, at };
    } finally {
      client.release();
    }
  },
  untilReceived: (count) => untilReceived(count, 60_000),
  arrivals: async () => (await receiverGet<{ arrivals: Record<string, number> }>('/stats')).arrivals,
});
await worker.stop();
const steadyReport = describeSteadyLoad(steady, WARMUP_SECONDS, SECONDS);
console.log(`steady ${RATE}/s: ${steadyReport.measured}`);
await db.end();

const med = (n: Setting, pick: (r: Round) => number) => median(rounds[n].map(pick));
const ratio = (n: Setting) => med(n, (r) => r.service / r.bare);
const row = (n: Setting) =>
  `| ${n} | ${n / PER_ENDPOINT} | ${med(n, (r) => r.service).toFixed(0)} | ${med(n, (r) => r.bare).toFixed(0)} | ${ratio(n).toFixed(2)}× ` +
  `| ${med(n, (r) => r.workerUs).toFixed(0)} + ${med(n, (r) => r.postgresUs).toFixed(0)} | ${med(n, (r) => r.bareUs).toFixed(0)} |`;
const target16 = 0.4;
const target64 = 0.5;
await writeSection(
  'Webhook delivery: deliveries per second and commit-to-receipt latency',
  `
Command: \`DATABASE_URL=… npm run bench:delivery\` (${new Date().toISOString().slice(0, 10)}; ${ROUNDS} rounds of ${BATCH} events at each
setting, the worker in a fresh process each time; PostgreSQL ${serverVersion} with autovacuum ${autovacuum}; load average ${loadAtStart.toFixed(1)} at the start,
${loadAverage().toFixed(1)} at the end).
${codeLine()}

Throughput: ${BATCH} events (about 0.9 KB each, one order per event, spread over the endpoints) and their deliveries committed at
once, then the time until the receiver (\`bench/receiver.ts\`, node:http answering 200, pinned to CPU 1) has every \`webhook-id\`.
Service: \`server/main.ts\` built, with \`SERVICE_ROLE=worker\`, pinned to CPU 0: claims with SKIP LOCKED (a claim that may find new
events positions them in the feed first), both signatures, undici keep-alive pool, every attempt recorded with its request and answer,
a log line per attempt (\`LOG_LEVEL=info\`). The events go to as many endpoints as the sends need at the default of 4 sends per
endpoint. Peer: \`bench/bare-sender.ts\` compiled, undici \`Pool.request\` posting the same signed payloads with the same
number in flight, no database. CPU: the worker process's and every PostgreSQL process's over the run, against the peer's
while it sends, per delivery (medians of the rounds). Before each round and the steady load, the queue's tables are
vacuumed in place of autovacuum, which this server has off (\`bench/upkeep.ts\`).

| in flight | endpoints | service deliveries/s | bare undici sender/s | service / bare | service CPU µs a delivery (worker + PostgreSQL) | bare CPU µs |
|---:|---:|---:|---:|---:|---:|---:|
${row(16)}
${row(64)}

Latency: ${RATE} events/s over 16 endpoints, each written in a transaction of its own and announced after its commit
(as the service's writers do), to a worker started for it, each timed from its commit to its arrival at the receiver.
${steadyReport.measured}

Targets:
- ≥ ${target64}× the bare sender at 64 in flight: ${ratio(64).toFixed(2)}×, ${met(ratio(64) >= target64)}; \
≥ ${target16}× at 16: ${ratio(16).toFixed(2)}×, ${met(ratio(16) >= target16)}
- ${steadyReport.targets}
`,
);
console.log('written to docs/BENCHMARKS.md');
// The receiver's kept-alive sockets would hold the process open.
process.exit(0);
