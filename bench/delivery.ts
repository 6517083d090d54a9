// npm run bench:delivery — webhook deliveries per second from the outbox to a local receiver, at 16 and 64 in flight,
// against a bare undici sender posting the same signed payloads to the same receiver; then commit-to-receipt latency
// at a steady 500 events/s. Needs DATABASE_URL (any database: the worker migrates it; the bench adds its own brand).
// Writes its section of docs/BENCHMARKS.md.
//
// The worker (and the bare sender) run pinned to CPU 0; the receiver and this process to CPU 1; PostgreSQL is free.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startScript, type ServiceProcess } from '../tests/support/process.ts';
import { median, percentile, writeSection } from './report.ts';

// What the service's work announcer sends after a commit (adapters/persistence/wake-ups/announcer.ts).
const ANNOUNCE = "select set_config('synchronous_commit', 'off', true), pg_notify('pbi_work', 'deliveries')";
const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) throw new Error('DATABASE_URL must name a PostgreSQL database');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const BATCH = Number(process.env.BENCH_EVENTS ?? 20_000);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
try { execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' }); } catch { /* unpinned */ }

const started: ServiceProcess[] = [];
// BENCH_NODE_ARGS: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, to see where the worker spends its time.
const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
const launch = (script: string, env: Record<string, string>, cpu: number) => {
  const proc = startScript(script, env, { cpu, nodeArgs: script === 'server/main.ts' ? nodeArgs : [] });
  started.push(proc);
  return proc;
};
process.on('exit', () => { for (const proc of started) proc.child.kill('SIGKILL'); });

const receiver = launch('bench/receiver.ts', {}, 1);
const target = `http://127.0.0.1:${await receiver.listening}/hooks`;
const receiverGet = async <T>(path: string) => (await (await fetch(`http://127.0.0.1:${new URL(target).port}${path}`)).json()) as T;

// The schema, by a worker that starts and stops; then a brand whose endpoint is the receiver, signed with a key.
const workerEnv = (inFlight: number) => ({
  DATABASE_URL, SERVICE_ROLE: 'worker', NODE_ENV: 'production', LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
  WEBHOOK_MAX_IN_FLIGHT: String(inFlight),
});
const startWorker = async (inFlight: number) => {
  const proc = launch('server/main.ts', { ...workerEnv(inFlight), LOG_LEVEL: 'info' }, 0);
  await proc.listening;
  return proc;
};
await (await startWorker(16)).stop();
const db = new pg.Pool({ connectionString: DATABASE_URL, max: 8 });
const brandId = randomUUID();
const endpointId = randomUUID();
const now = new Date();
await db.query(`insert into accounts (id, name, role, parent_id, created_at) values ($1, 'Bench brand', 'brand', null, $2)`, [brandId, now]);
await db.query(`insert into webhook_configs (id, account_id, scope, url, transformer, version, signature_key, enabled, created_at, updated_at)
  values ($1, $2, 'brand', $3, 'default', '1.3.0', 'bench-signing-key-0123456789', true, $4, $4)`, [endpointId, brandId, target, now]);

// An OrderStatusEvent-sized payload (~0.9 KB), one order per event: the throughput of independent orders.
const PAYLOAD = `json_build_object('_eid', id, '_type', 'OrderStatusEvent', '_v', '1.3.0', 'orderId', 'bench-' || n, 'orderNumber', 'O-' || lpad(n::text, 10, '0'),
  'status', 'appointment_confirmed', 'customer', json_build_object('email', 'c' || n || '@example.com', 'firstName', 'Alex', 'lastName', 'Sample'),
  'shippingAddress', json_build_object('street', 'Hauptstraße', 'houseNumber', '12', 'postalCode', '10115', 'city', 'Berlin', 'countryCode', 'DE'),
  'products', json_build_array(json_build_object('sku', 'WB-11KW', 'name', 'Wallbox 11 kW', 'quantity', 1)), 'notes', repeat('x', 500))`;

/** `count` events with their deliveries, committed at once: answers the time of the commit. */
async function prefill(count: number) {
  const client = await db.connect();
  try {
    await client.query('begin');
    await client.query(`
      with fresh as (select gen_random_uuid() as id, n from generate_series(1, $1) n),
      written as (
        insert into events (id, account_id, scope, type, order_id, payload, endpoint_id, created_at)
        select id, $2, 'brand', 'OrderStatusEvent', 'bench-' || n, ${PAYLOAD}, $3, $4 from fresh returning id, order_id)
      insert into deliveries (id, event_id, endpoint_id, account_id, order_id, status, attempts, next_attempt_at, created_at, updated_at)
      select gen_random_uuid(), id, $3, $2, order_id, 'pending', 0, $4, $4, $4 from written`, [count, brandId, endpointId, new Date()]);
    await client.query('commit');
    const committed = performance.now();
    await client.query(ANNOUNCE);
    return committed;
  } finally {
    client.release();
  }
}

async function untilReceived(count: number, timeoutMs = 120_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const { distinct } = await receiverGet<{ distinct: number }>('/count');
    if (distinct >= count) return performance.now();
    if (performance.now() > deadline) throw new Error(`only ${distinct} of ${count} arrived`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

type Rate = { service: number[]; bare: number[] };
const throughput: Record<16 | 64, Rate> = { 16: { service: [], bare: [] }, 64: { service: [], bare: [] } };
const payloadFile = join(mkdtempSync(join(tmpdir(), 'pbi-bench-delivery-')), 'payloads.json');
for (let round = 0; round < ROUNDS; round++) {
  for (const inFlight of [16, 64]) {
    await receiverGet('/stats');
    const worker = await startWorker(inFlight);
    const t0 = await prefill(BATCH);
    const t1 = await untilReceived(BATCH);
    await worker.stop();
    const serviceRate = BATCH / ((t1 - t0) / 1000);
    throughput[inFlight as 16 | 64].service.push(serviceRate);

    // The bare peer sends the same payloads (the last batch's events) to the same receiver.
    const { rows } = await db.query<{ id: string; body: string }>(
      `select e.id, e.payload::text as body from events e where e.account_id = $1 order by e.seq desc limit $2`, [brandId, BATCH]);
    writeFileSync(payloadFile, JSON.stringify(rows));
    await receiverGet('/stats');
    const bare = launch('bench/bare-sender.ts', { TARGET: target, PAYLOADS: payloadFile, IN_FLIGHT: String(inFlight) }, 0);
    await bare.exited;
    const { sent, seconds } = JSON.parse(/\{"sent".*\}/.exec(bare.output())![0]) as { sent: number; seconds: number };
    throughput[inFlight as 16 | 64].bare.push(sent / seconds);
    console.log(`in flight ${inFlight}: service ${serviceRate.toFixed(0)}/s, bare ${(sent / seconds).toFixed(0)}/s`);
  }
}

// Steady load: events written one per transaction (with the NOTIFY every writer sends after its commit), each timed at its commit.
await receiverGet('/stats');
const worker = await startWorker(64);
const committedAt = new Map<string, number>();
const startedAt = performance.now();
const writes: Promise<void>[] = [];
for (let i = 0; performance.now() - startedAt < SECONDS * 1000; i++) {
  const due = startedAt + (i * 1000) / RATE;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  writes.push((async () => {
    const id = randomUUID();
    const client = await db.connect();
    try {
      await client.query('begin');
      await client.query(`with fresh as (select $1::uuid as id, $5::int as n),
        written as (insert into events (id, account_id, scope, type, order_id, payload, endpoint_id, created_at)
          select id, $2, 'brand', 'OrderStatusEvent', 'steady-' || n, ${PAYLOAD}, $3, $4 from fresh returning id, order_id)
        insert into deliveries (id, event_id, endpoint_id, account_id, order_id, status, attempts, next_attempt_at, created_at, updated_at)
        select gen_random_uuid(), id, $3, $2, order_id, 'pending', 0, $4, $4, $4 from written`, [id, brandId, endpointId, new Date(), i]);
      await client.query('commit');
      committedAt.set(id, Date.now());
      await client.query(ANNOUNCE);
    } finally {
      client.release();
    }
  })());
}
await Promise.all(writes);
await untilReceived(committedAt.size, 60_000);
const { arrivals } = await receiverGet<{ arrivals: Record<string, number> }>('/stats');
await worker.stop();
const latencies = [...committedAt].map(([id, at]) => arrivals[id]! - at).filter((ms) => Number.isFinite(ms));
const p50 = percentile(latencies, 0.5);
const p99 = percentile(latencies, 0.99);
console.log(`steady ${RATE}/s: p50 ${p50} ms, p99 ${p99} ms over ${latencies.length} events`);
await db.end();

const rate = (n: 16 | 64) => median(throughput[n].service);
const ratio = (n: 16 | 64) => median(throughput[n].service.map((s, i) => s / throughput[n].bare[i]!));
await writeSection('Webhook delivery: deliveries per second and commit-to-receipt latency', `
Command: \`DATABASE_URL=… npm run bench:delivery\` (${new Date().toISOString().slice(0, 10)}; ${ROUNDS} rounds of ${BATCH} events at each
setting, the worker in a fresh process each time; PostgreSQL 15 with default settings).

Throughput: ${BATCH} events (about 0.9 KB each, one order per event) and their deliveries committed at once, then the time until
the receiver (\`bench/receiver.ts\`, node:http answering 200, pinned to CPU 1) has every \`webhook-id\`. Service: the real
\`server/main.ts\` with \`SERVICE_ROLE=worker\` pinned to CPU 0: claims with SKIP LOCKED, both signatures, undici keep-alive pool,
every attempt recorded. Peer: \`bench/bare-sender.ts\`, undici \`Pool.request\` posting the same signed payloads with the same
number in flight, no database.

| in flight | service deliveries/s | bare undici sender/s | service / bare |
|---:|---:|---:|---:|
| 16 | ${rate(16).toFixed(0)} | ${median(throughput[16].bare).toFixed(0)} | ${ratio(16).toFixed(2)}× |
| 64 | ${rate(64).toFixed(0)} | ${median(throughput[64].bare).toFixed(0)} | ${ratio(64).toFixed(2)}× |

Latency: ${RATE} events/s for ${SECONDS} s, each written in a transaction of its own and announced after its commit (as the service's writers do),
timed from its commit to its arrival at the receiver: ${latencies.length} events, p50 **${p50} ms**, p99 **${p99} ms**.

Targets:
- ≥ 3,000 deliveries/s at 64 in flight: ${rate(64).toFixed(0)}, ${rate(64) >= 3000 ? 'met' : 'not met'}
- commit-to-receipt p50 ≤ 50 ms: ${p50} ms, ${p50 <= 50 ? 'met' : 'not met'}; p99 ≤ 250 ms: ${p99} ms, ${p99 <= 250 ? 'met' : 'not met'}
`);
console.log('written to docs/BENCHMARKS.md');
// The receiver's kept-alive sockets would hold the process open.
process.exit(0);
