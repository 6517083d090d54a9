// npm run bench:partner-orders — the partner listings at scale, against a bare node:http + pg peer.
// Needs DATABASE_URL of a database filled by `npm run seed:bench` (1,000,000 jobs, a 60,000-job scope of a
// master with 40 children). Writes its section of docs/BENCHMARKS.md.
//
// Server processes are pinned to CPU 0 and the load generator (autocannon, in this process) runs on CPU 1;
// PostgreSQL is left free. Service and peer are measured alternately, each round in fresh processes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { type ServiceProcess, startScript, startService } from '../tests/support/process.ts';
import { type LegacySample, type Sample, writePartnerOrdersSection } from './partner-orders-report.ts';
import { loadAverage, median } from './report.ts';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) throw new Error('DATABASE_URL must name a database filled by npm run seed:bench');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const loadAtStart = loadAverage();
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
try {
  execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
} catch {
  /* unpinned */
}

const db = new pg.Client({ connectionString: DATABASE_URL });
await db.connect();
const masterId = (
  await db.query<{ account_id: string }>(
    `select c.account_id from contacts c where lower(c.email) = 'bench-master@example.com'`,
  )
).rows[0]?.account_id;
if (!masterId) throw new Error('no bench-master@example.com: run npm run seed:bench first');
const scope = (
  await db.query<{ id: string }>('select id from accounts where id = $1 or parent_id = $1', [masterId])
).rows.map((r) => r.id);
const scopeSize = (
  await db.query<{ n: number }>('select count(*)::int as n from jobs where partner_id = any($1::uuid[])', [scope])
).rows[0]!.n;
const totalJobs = (await db.query<{ n: number }>('select count(*)::int as n from jobs')).rows[0]!.n;

const dataDir = mkdtempSync(join(tmpdir(), 'pbi-bench-'));
const serviceEnv = {
  DATABASE_URL,
  DATA_DIR: dataDir,
  NODE_ENV: 'production',
  JWT_SECRET: 'bench-secret-0123456789-0123456789-0123',
  LOGIN_LIMIT_PER_EMAIL: '1000',
  LOGIN_LIMIT_PER_ADDRESS: '1000',
  API_RATE_LIMIT_PER_ACCOUNT: '1000000',
  API_CONCURRENCY_PER_ACCOUNT: '10000',
};
const startServiceProcess = () => startScript('server/main.ts', serviceEnv, { cpu: 0 });
const startBare = () => startScript('bench/bare-server.ts', { DATABASE_URL, MASTER_ID: masterId }, { cpu: 0 });

async function accessToken(): Promise<string> {
  const service = startService(serviceEnv);
  const base = `http://127.0.0.1:${await service.listening}`;
  await fetch(`${base}/v3/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"email":"bench-master@example.com"}',
  });
  await new Promise((r) => setTimeout(r, 500));
  const refresh = execFileSync(process.execPath, ['--import', 'tsx', 'server/last-mail.ts', 'token'], {
    env: { ...process.env, DATA_DIR: dataDir },
  })
    .toString()
    .trim();
  const res = await fetch(`${base}/v3/auth/access-token`, {
    method: 'POST',
    headers: { authorization: `Bearer ${refresh}`, 'content-type': 'application/json' },
    body: '{"expires_after":86400}',
  });
  const { access_token } = (await res.json()) as { access_token: string };
  await service.stop();
  return access_token;
}
const token = await accessToken();

const scenarios = [
  {
    name: 'page 1, pageSize 50',
    service: '/v3/partner-orders/paginated?page=1&pageSize=50',
    bare: '/page?page=1&pageSize=50',
  },
  {
    name: 'page 1, active=true',
    service: '/v3/partner-orders/paginated?page=1&pageSize=50&active=true',
    bare: '/page?page=1&pageSize=50&active=true',
  },
  {
    name: 'page 1, pageSize 200',
    service: '/v3/partner-orders/paginated?page=1&pageSize=200',
    bare: '/page?page=1&pageSize=200',
  },
  {
    name: 'page 600, pageSize 50',
    service: '/v3/partner-orders/paginated?page=600&pageSize=50',
    bare: '/page?page=600&pageSize=50',
  },
];

const load = (port: number, path: string, seconds: number, auth: boolean) =>
  new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}${path}`,
        connections: 50,
        duration: seconds,
        headers: auth ? { authorization: `Bearer ${token}` } : {},
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });

const samples: Record<string, { service: Sample[]; bare: Sample[] }> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of round % 2 === 0 ? (['bare', 'service'] as const) : (['service', 'bare'] as const)) {
    const proc = kind === 'service' ? startServiceProcess() : startBare();
    const port = await proc.listening;
    for (const s of scenarios) {
      const path = kind === 'service' ? s.service : s.bare;
      await load(port, path, 3, kind === 'service'); // warm-up
      const r = await load(port, path, DURATION, kind === 'service');
      (samples[s.name] ??= { service: [], bare: [] })[kind].push({
        rps: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        bytes: r.throughput.average,
        non2xx: r.non2xx,
      });
      console.log(
        `${kind} ${s.name}: ${r.requests.average.toFixed(0)} req/s p99 ${r.latency.p99} ms non2xx ${r.non2xx}`,
      );
    }
    await proc.stop();
  }
}

/**
 * Time to first and last byte of the whole legacy listing, the server's peak RSS (fresh process each round) and how
 * much its RSS grew while one stream ran (sampled every 100 ms from the first byte on: flat memory grows by little).
 * Service and peer alternate round by round, so that both see the same machine.
 */
async function legacyRound(kind: 'service' | 'bare') {
  const results: LegacySample[] = [];
  const proc: ServiceProcess = kind === 'service' ? startServiceProcess() : startBare();
  const port = await proc.listening;
  const status = () => readFileSync(`/proc/${proc.child.pid}/status`, 'utf8');
  const mb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status())![1]) / 1024;
  for (let i = 0; i < 3; i++) {
    const started = process.hrtime.bigint();
    const rss: number[] = [];
    const { ttfb, bytes } = await new Promise<{ ttfb: number; bytes: number }>((resolve, reject) => {
      let sampler: NodeJS.Timeout | undefined;
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: kind === 'service' ? '/v3/partner-orders' : '/legacy',
          headers: { authorization: `Bearer ${token}` },
        },
        (res) => {
          let first = 0;
          let bytes = 0;
          res.on('data', (d: Buffer) => {
            if (!first) {
              first = Number(process.hrtime.bigint() - started) / 1e9;
              rss.push(mb('VmRSS'));
              sampler = setInterval(() => rss.push(mb('VmRSS')), 100);
            }
            bytes += d.length;
          });
          res.on('end', () => {
            clearInterval(sampler);
            resolve({ ttfb: first, bytes });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
    const ttlb = Number(process.hrtime.bigint() - started) / 1e9;
    results.push({ ttfb, ttlb, bytes, peakRssMb: mb('VmHWM'), growthMb: Math.max(...rss) - rss[0]!, first: i === 0 });
  }
  await proc.stop();
  return results;
}
const legacyService: LegacySample[] = [];
const legacyBare: LegacySample[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of round % 2 === 0 ? (['service', 'bare'] as const) : (['bare', 'service'] as const)) {
    (kind === 'service' ? legacyService : legacyBare).push(...(await legacyRound(kind)));
  }
}

/** Median server-side execution time of a query over 7 runs (the first discarded), on the vacuumed table. */
async function explain(sql: string, values: unknown[], timing = true) {
  const times = [];
  for (let i = 0; i < 8; i++) {
    const { rows } = await db.query<{ 'QUERY PLAN': string }>(
      `explain (analyze, buffers${timing ? '' : ', timing off'}) ${sql}`,
      values,
    );
    if (i > 0) times.push(Number(/Execution Time: ([\d.]+) ms/.exec(rows.map((r) => r['QUERY PLAN']).join('\n'))![1]));
  }
  return median(times);
}
const { pageQuery, countQuery, windowQuery, afterQuery } = await import(
  '../adapters/persistence/partner-order-queries.ts'
);
await db.query('vacuum analyze jobs');
const all = { updatedSince: null, active: false };
const plans = {
  page1: await explain(pageQuery(scope, all, 0, 50).text, pageQuery(scope, all, 0, 50).values),
  page600: await explain(pageQuery(scope, all, 29_950, 50).text, pageQuery(scope, all, 29_950, 50).values),
  count: await explain(countQuery(scope, all).text, countQuery(scope, all).values, false),
  countActive: await explain(
    countQuery(scope, { ...all, active: true }).text,
    countQuery(scope, { ...all, active: true }).values,
    false,
  ),
  // A stream's batch of 500 halfway through the scope: inside the window learned from the batch before, and the
  // fallback.
  ...(await (async () => {
    const at = async (offset: number) =>
      (
        await db.query<{ updated_at: string; api_id: string }>(
          'select updated_at::text, api_id from jobs where partner_id = any($1::uuid[]) order by updated_at desc, api_id offset $2 limit 1',
          [scope, offset],
        )
      ).rows[0]!;
    const [from, last] = [await at(29_500), await at(29_999)];
    const after = { updatedAt: last.updated_at, apiId: last.api_id, batchFrom: from.updated_at };
    return {
      window: await explain(windowQuery(scope, all, after, 500).text, windowQuery(scope, all, after, 500).values),
      after: await explain(afterQuery(scope, all, after, 500).text, afterQuery(scope, all, after, 500).values),
    };
  })()),
};
await db.end();
rmSync(dataDir, { recursive: true, force: true });

await writePartnerOrdersSection({
  ROUNDS,
  DURATION,
  loadAtStart,
  totalJobs,
  scope,
  scopeSize,
  scenarios,
  samples,
  legacyService,
  legacyBare,
  plans,
});
process.exit(0);
