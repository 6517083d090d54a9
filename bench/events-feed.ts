// npm run bench:events-feed — events per second one reader drains from the event feed (GET /v3/events, limit 500)
// out of a backlog of 100,000 events of its endpoint while 200 events/s are written meanwhile, against a bare pg
// reader paging the same rows by position; and how long the service's background sequencer takes to give the backlog
// its feed positions. Needs DATABASE_URL (any database: the service migrates it and makes its own brand). Writes its
// section of docs/BENCHMARKS.md.
//
// The service (and the bare reader) run pinned to CPU 0; the reader and writers (this process) to CPU 1; PostgreSQL
// is left free.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { integratorLoggedIn, processClient, type ServiceProcess } from '../tests/support/process.ts';
import { startBuiltPeer, startBuiltService } from './built.ts';
import { type Bare, type Drain, feedReader } from './events-feed-reader.ts';
import { writeEventsFeedSection } from './events-feed-report.ts';
import { event, insertEvents } from './sample-events.ts';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) throw new Error('DATABASE_URL must name a PostgreSQL database');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const BACKLOG = Number(process.env.BENCH_EVENTS ?? 100_000);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const LIMIT = 500;
const WARM_UP_SECONDS = 3;
const TARGET = 10_000;
// BENCH_NODE_ARGS: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, to see where the service spends its time.
const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
try {
  execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
} catch {
  /* unpinned */
}

const ADMIN = 'bench-admin-token-0123456789';
const dataDir = mkdtempSync(join(tmpdir(), 'pbi-bench-events-feed-'));
const env = {
  DATABASE_URL,
  DATA_DIR: dataDir,
  NODE_ENV: 'production',
  JWT_SECRET: 'bench-secret-0123456789-0123456789-0123',
  ADMIN_TOKEN: ADMIN,
  SERVICE_ROLE: 'all',
  LOGIN_LIMIT_PER_EMAIL: '1000',
  LOGIN_LIMIT_PER_ADDRESS: '1000',
  API_RATE_LIMIT_PER_ACCOUNT: '1000000',
  API_CONCURRENCY_PER_ACCOUNT: '10000',
  LOG_LEVEL: 'info',
};
const started: ServiceProcess[] = [];
// Both sides as deployed: the service built (as `npm start` runs it once built), the bare reader compiled by tsc.
const launch = (script: 'server/main.ts' | 'bench/bare-feed.ts', extra: Record<string, string> = {}) => {
  const proc =
    script === 'server/main.ts'
      ? startBuiltService({ ...env, ...extra }, { cpu: 0, nodeArgs })
      : startBuiltPeer(script, { DATABASE_URL, ...extra }, { cpu: 0 });
  started.push(proc);
  return proc;
};
// A failed run must not leave a service behind to skew the next one.
process.on('exit', () => {
  for (const proc of started) proc.child.kill('SIGKILL');
});

// A brand logged in through the mail like an integrator, with a configuration without a URL: its events are kept for
// the feed, and nothing is delivered.
const setup = launch('server/main.ts');
const client = processClient(await setup.listening, ADMIN);
const { accountId: brandId, token } = await integratorLoggedIn(
  client,
  dataDir,
  'brand',
  `bench-brand-${randomUUID().slice(0, 8)}@example.com`,
  86_400,
);
await client.admin('webhookConfigs.upsert', {
  accountId: brandId,
  scope: 'brand',
  url: null,
  transformer: 'default',
  version: '1.3.0',
});
await setup.stop();

const db = new pg.Pool({ connectionString: DATABASE_URL, max: 8 });
const {
  rows: [config],
} = await db.query<{ id: string }>(`select id from webhook_configs where account_id = $1 and scope = 'brand'`, [
  brandId,
]);
const endpointId = config!.id;
const {
  rows: [server],
} = await db.query<{ version: string; autovacuum: string }>(
  `select current_setting('server_version') as version, current_setting('autovacuum') as autovacuum`,
);

// The backlog: BACKLOG events of the endpoint, written with the service stopped, 10,000 a statement.
const backlogStart = performance.now();
for (let from = 1; from <= BACKLOG; from += 10_000) {
  const batch = [];
  for (let n = from; n <= Math.min(BACKLOG, from + 9_999); n++) batch.push(event(n, 'bench'));
  await insertEvents(db, brandId, endpointId, batch);
}
await db.query('vacuum analyze events');
const {
  rows: [size],
} = await db.query<{ avg: string }>(
  `select avg(length(payload::text))::int as avg from events where endpoint_id = $1`,
  [endpointId],
);
const payloadBytes = Number(size!.avg);
console.log(
  `backlog: ${BACKLOG} events of ~${payloadBytes} B written in ${((performance.now() - backlogStart) / 1000).toFixed(1)} s`,
);
const backlogIds = new Set(
  (await db.query<{ id: string }>(`select id::text as id from events where endpoint_id = $1`, [endpointId])).rows.map(
    (r) => r.id,
  ),
);

const unpositioned = async () =>
  Number(
    (
      await db.query<{ n: string }>('select count(*) as n from events where position is null and endpoint_id = $1', [
        endpointId,
      ])
    ).rows[0]!.n,
  );

// The service's background sequencer positions the backlog (rounds of 1,000 while they fill); the drain starts once
// it is done, so that it measures reading. The count is taken every 250 ms.
const sequencer = launch('server/main.ts');
await sequencer.listening;
const seqStart = performance.now();
const seqSamples: { s: number; left: number }[] = [];
for (;;) {
  const left = await unpositioned();
  seqSamples.push({ s: (performance.now() - seqStart) / 1000, left });
  if (left === 0) break;
  if (performance.now() - seqStart > 600_000) throw new Error(`${left} events still unpositioned after 600 s`);
  await new Promise((resolve) => setTimeout(resolve, 250));
}
const firstMoved = seqSamples.find((x) => x.left < BACKLOG)?.s ?? 0;
const seqSeconds = seqSamples.at(-1)!.s;
const seqRate = BACKLOG / Math.max(0.001, seqSeconds - firstMoved);
console.log(
  `sequencing: ${BACKLOG} positioned ${seqSeconds.toFixed(2)} s after the service listened (first after ${firstMoved.toFixed(2)} s): ${seqRate.toFixed(0)}/s`,
);
await sequencer.stop();
// What autovacuum does on a default server (this one may have it off): the sequencer's updates left a dead version of
// every backlog row.
await db.query('vacuum analyze events');

/** RATE events/s for the endpoint, each its own autocommit insert, in an open loop, until stopped. */
function writer(round: number) {
  const written = new Set<string>();
  const pending: Promise<void>[] = [];
  let failures = 0;
  let stopped = false;
  const loop = (async () => {
    const begun = performance.now();
    for (let i = 0; !stopped; i++) {
      const wait = begun + (i * 1000) / RATE - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const e = event(1_000_000 * (round + 1) + i, 'steady');
      pending.push(
        insertEvents(db, brandId, endpointId, [e]).then(
          () => {
            written.add(e.id);
          },
          () => {
            failures++;
          },
        ),
      );
    }
  })();
  return {
    written,
    async stop() {
      stopped = true;
      await loop;
      await Promise.all(pending);
      return { written, failures };
    },
  };
}

/** The steady writes of a round are taken away after it: every round drains the same backlog. */
async function dropSteady() {
  await db.query(`delete from events where endpoint_id = $1 and order_id like 'steady-%'`, [endpointId]);
  await db.query('vacuum analyze events');
}

const { agent, drainService } = feedReader({ token, LIMIT, WARM_UP_SECONDS, writer, backlogIds });

async function drainBare(round: number): Promise<Bare> {
  const steady = writer(round);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const bare = launch('bench/bare-feed.ts', { ENDPOINT_ID: endpointId, LIMIT: String(LIMIT) });
  const code = await bare.exited;
  await steady.stop();
  const line = /\{"read".*\}/.exec(bare.output());
  if (code !== 0 || !line) throw new Error(`bare reader exited with ${code}:\n${bare.output()}`);
  return JSON.parse(line[0]) as Bare;
}

const drains: Drain[] = [];
const bares: Bare[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of round % 2 === 0 ? (['service', 'bare'] as const) : (['bare', 'service'] as const)) {
    if (kind === 'service') {
      const service = launch('server/main.ts');
      const d = await drainService(await service.listening, round);
      await service.stop();
      drains.push(d);
      console.log(
        `service: ${(d.items / d.seconds).toFixed(0)} events/s (${d.items} in ${d.seconds.toFixed(2)} s, ${d.pages} pages, ` +
          `p50 ${d.p50.toFixed(1)} ms p99 ${d.p99.toFixed(1)} ms); backlog once ${d.backlogOnce}/${BACKLOG}, duplicates ${d.duplicates}, ` +
          `writes ${d.steadyAtEnd}/${d.steadyWritten} received (${d.steadyInDrain} within the drain), write failures ${d.writeFailures}`,
      );
    } else {
      const b = await drainBare(round);
      bares.push(b);
      console.log(
        `bare: ${(b.read / b.seconds).toFixed(0)} events/s (${b.read} in ${b.seconds.toFixed(2)} s, ${b.pages} pages, p50 ${b.p50.toFixed(1)} ms p99 ${b.p99.toFixed(1)} ms)`,
      );
    }
    await dropSteady();
  }
}
agent.destroy();
await db.end();

await writeEventsFeedSection({
  ROUNDS,
  BACKLOG,
  RATE,
  LIMIT,
  WARM_UP_SECONDS,
  TARGET,
  server,
  payloadBytes,
  seqSamples,
  seqSeconds,
  firstMoved,
  seqRate,
  drains,
  bares,
});
