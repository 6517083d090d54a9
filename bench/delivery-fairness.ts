// npm run bench:delivery-fairness — CONTRACT §7, no endpoint slows another: a quiet tenant's commit-to-receipt time
// alone, then beside a silent endpoint (one that never answers) with a backlog of 300 deliveries, then beside a crowd
// of silent endpoints known to be failing (more than the worker's sends can serve at their share each), in one run.
// Needs DATABASE_URL. Writes its section of docs/BENCHMARKS.md.
//
// The worker runs built with the service's defaults (64 sends, 4 per endpoint, WEBHOOK_TIMEOUT_MS 10 s), pinned to
// CPU 0; the receiver (bench/receiver.ts: /silent never answers) and this process to CPU 1.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { type ServiceProcess, startScript } from '../tests/support/process.ts';
import { startBuiltService } from './built.ts';
import { codeLine, loadAverage, percentile, writeSection } from './report.ts';

const ANNOUNCE = "select set_config('synchronous_commit', 'off', true), pg_notify('pbi_work', 'deliveries')";
const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) throw new Error('DATABASE_URL must name a PostgreSQL database');
const RATE = Number(process.env.BENCH_RATE ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 300);
/**
 * Silent endpoints of the crowd, and the backlog of each: 40 × 4 sends would take more than the worker's 64, and 40
 * held back at one each more than their half (32).
 */
const CROWD = Number(process.env.BENCH_CROWD ?? 40);
const CROWD_BACKLOG = Number(process.env.BENCH_CROWD_BACKLOG ?? 100);
try {
  execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
} catch {
  /* unpinned */
}
const loadAtStart = loadAverage();

const started: ServiceProcess[] = [];
const keep = (proc: ServiceProcess) => {
  started.push(proc);
  return proc;
};
process.on('exit', () => {
  for (const proc of started) proc.child.kill('SIGKILL');
});
const receiver = keep(startScript('bench/receiver.ts', {}, { cpu: 1 }));
const base = `http://127.0.0.1:${await receiver.listening}`;
const receiverGet = async <T>(path: string) => (await (await fetch(`${base}${path}`)).json()) as T;

const worker = keep(
  startBuiltService(
    {
      DATABASE_URL,
      SERVICE_ROLE: 'worker',
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    },
    { cpu: 0 },
  ),
);
await worker.listening;
const db = new pg.Pool({ connectionString: DATABASE_URL, max: 8 });
async function endpoint(name: string, url: string) {
  const brandId = randomUUID();
  const endpointId = randomUUID();
  const now = new Date();
  await db.query(`insert into accounts (id, name, role, parent_id, created_at) values ($1, $2, 'brand', null, $3)`, [
    brandId,
    name,
    now,
  ]);
  await db.query(
    `insert into webhook_configs (id, account_id, scope, url, transformer, version, signature_key, enabled, created_at, updated_at)
    values ($1, $2, 'brand', $3, 'default', '1.3.0', 'bench-signing-key-0123456789', true, $4, $4)`,
    [endpointId, brandId, url, now],
  );
  return { brandId, endpointId };
}
const quiet = await endpoint('Quiet brand', `${base}/hooks/quiet`);
const silent = await endpoint('Silent brand', `${base}/silent/hooks`);
const crowd: (typeof silent)[] = [];
for (let n = 0; n < CROWD; n++) crowd.push(await endpoint(`Silent brand ${n}`, `${base}/silent/crowd/${n}`));
// Failing for an hour (CONTRACT §11), as an endpoint is after its first attempts got nothing.
await db.query(`update webhook_configs set failing_since = now() - interval '1 hour' where id = any($1::uuid[])`, [
  crowd.map((e) => e.endpointId),
]);

// `count` events of orders of their own for the endpoint, with their deliveries, in one transaction (as the outbox
// writes them), announced after the commit: answers the event ids and the time of the commit.
async function write(to: typeof quiet, count: number) {
  const client = await db.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query<{ event_id: string }>(
      `
      with fresh as (select gen_random_uuid() as id, n from generate_series(1, $1) n),
      written as (
        insert into events (id, account_id, scope, type, order_id, payload, endpoint_id, created_at)
        select id, $2, 'brand', 'OrderStatusEvent', 'fair-' || id, json_build_object('_eid', id, '_type', 'OrderStatusEvent', 'n', n), $3, $4
        from fresh order by n
        returning id, order_id, seq)
      insert into deliveries (id, event_id, endpoint_id, account_id, order_id, status, attempts, next_attempt_at, created_at, updated_at)
      select gen_random_uuid(), id, $3, $2, order_id, 'pending', 0, $4, $4, $4 from written order by seq
      returning event_id`,
      [count, to.brandId, to.endpointId, new Date()],
    );
    await client.query('commit');
    const committedAt = Date.now();
    await client.query(ANNOUNCE);
    return { ids: rows.map((r) => r.event_id), committedAt };
  } finally {
    client.release();
  }
}

/** The quiet tenant's events at RATE a second for SECONDS, one a transaction: their commit-to-receipt times. */
async function quietLoad() {
  await receiverGet('/stats');
  const committed = new Map<string, number>();
  const t0 = performance.now();
  const writes: Promise<void>[] = [];
  for (let i = 0; performance.now() - t0 < SECONDS * 1000; i++) {
    const wait = t0 + (i * 1000) / RATE - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    writes.push(
      write(quiet, 1).then(({ ids, committedAt }) => {
        committed.set(ids[0]!, committedAt);
      }),
    );
  }
  await Promise.all(writes);
  const deadline = Date.now() + 60_000;
  while ((await receiverGet<{ distinct: number }>('/count')).distinct < committed.size && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // The silent endpoints' requests and most open while this ran, as /stats tells them before it starts them afresh.
  const { arrivals, silent } = await receiverGet<{
    arrivals: Record<string, number>;
    silent: { received: number; mostOpen: number };
  }>('/stats');
  const times = [...committed].map(([id, at]) => (arrivals[id] === undefined ? Infinity : arrivals[id]! - at));
  return {
    n: times.length,
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
    max: Math.max(...times),
    lost: times.filter((t) => t === Infinity).length,
    silent,
  };
}

const alone = await quietLoad();
console.log('alone', alone);
await write(silent, BACKLOG);
await new Promise((resolve) => setTimeout(resolve, 1000));
const beside = await quietLoad();
const silentSeen = beside.silent;
console.log('beside a silent endpoint', beside);
for (const e of crowd) await write(e, CROWD_BACKLOG);
await new Promise((resolve) => setTimeout(resolve, 1000));
const besideCrowd = await quietLoad();
const crowdSeen = besideCrowd.silent;
console.log('beside a crowd of silent endpoints', besideCrowd);
await worker.stop();
// The backlogs stay behind for nobody: they fail over their retries like any other; this bench's brands are its own.
await db.query(
  `update webhook_configs set enabled = false, disabled_reason = 'integrator' where id = any($1::uuid[])`,
  [[silent, ...crowd].map((e) => e.endpointId)],
);
await db.end();

const bound = 2 * alone.p99 + 100;
const row = (name: string, r: typeof alone) => `| ${name} | ${r.n} | ${r.p50} | ${r.p99} | ${r.max} |`;
await writeSection(
  'Webhook delivery: a quiet endpoint beside a silent one',
  `
Command: \`DATABASE_URL=… npm run bench:delivery-fairness\` (${new Date().toISOString().slice(0, 10)}; load average
${loadAtStart.toFixed(1)} at the start, ${loadAverage().toFixed(1)} at the end).
${codeLine()}

One worker (\`server/main.ts\` built, \`SERVICE_ROLE=worker\`, the defaults: 64 sends at once, 4 per endpoint,
\`WEBHOOK_TIMEOUT_MS\` 10 s), pinned to CPU 0. A quiet brand's events, ${RATE} a second for ${SECONDS} s, each
committed on its own (as the service's writers do): the time from each commit to its arrival at the receiver
(\`bench/receiver.ts\`, CPU 1), first alone, then right after a silent brand's ${BACKLOG} events (an endpoint that
never answers: every request hangs until the timeout) were committed at once, then right after ${CROWD} more silent
brands' ${CROWD_BACKLOG} events each.

| quiet endpoint | events | p50 ms | p99 ms | max ms |
|---|---:|---:|---:|---:|
${row('alone', alone)}
${row(`beside a silent endpoint with ${BACKLOG} due`, beside)}
${row(`beside ${CROWD} silent endpoints, failing, with ${CROWD_BACKLOG} due each`, besideCrowd)}

The silent endpoint received ${silentSeen.received} requests while the second row ran, at most
**${silentSeen.mostOpen}** open at once. While the third row ran, the silent endpoints (the crowd, and the first one's
backlog) received ${crowdSeen.received} requests, at most **${crowdSeen.mostOpen}** open at once. The crowd's
endpoints are failing (CONTRACT §11) when their backlogs are committed, as endpoints are once their first attempts got
nothing: a process holds each back to one send at a time, and all of them together to half its sends (32 of 64).

Targets: p99 beside ≤ 2 × p99 alone + 100 ms = ${bound} ms: ${beside.p99} ms,
${beside.p99 <= bound ? 'met' : 'not met'}; beside the crowd ${besideCrowd.p99} ms,
${besideCrowd.p99 <= bound ? 'met' : 'not met'}. Nothing later than 2 s: ${beside.max} ms and ${besideCrowd.max} ms,
${[beside, besideCrowd].every((r) => r.max <= 2000 && r.lost === 0) ? 'met' : 'not met'}.
`,
);
console.log('written to docs/BENCHMARKS.md');
process.exit(0);
