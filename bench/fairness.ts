// npm run bench:fairness — fairness in one process, to see what a noisy tenant costs a quiet one without the soak's
// other load: one `api` process (the real server/main.ts) on DATABASE_URL, a quiet partner polling its paginated
// listing at 20/s (15 s alone, then 15 s under noise), and a noisy partner hammering the same listing over
// FAIR_CONNECTIONS (32) connections: evenly at FAIR_RATE requests/s (bench/noise.ts), or as fast as they go with
// FAIR_RATE=0 (autocannon). API_CONCURRENCY_PER_ACCOUNT is passed on to the service when set. Prints the quiet
// p50/p99/max alone and under noise; writes nothing. BENCH_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) goes
// to the service process.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { integratorLoggedIn, processClient, startScript } from '../tests/support/process.ts';

const ADMIN = 'bench-admin-token-0123456789';
const dataDir = mkdtempSync(join(tmpdir(), 'fair-'));
if (!process.env.DATABASE_URL) throw new Error('bench:fairness needs DATABASE_URL (a PostgreSQL server)');
const N = Number(process.env.FAIR_CONNECTIONS ?? 32);
const extra: Record<string, string> = process.env.API_CONCURRENCY_PER_ACCOUNT
  ? { API_CONCURRENCY_PER_ACCOUNT: process.env.API_CONCURRENCY_PER_ACCOUNT }
  : {};
const svc = startScript(
  'server/main.ts',
  {
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: ADMIN,
    JWT_SECRET: 'bench-secret-0123456789-0123456789-0123',
    SERVICE_ROLE: 'api',
    LOGIN_LIMIT_PER_EMAIL: '1000',
    LOGIN_LIMIT_PER_ADDRESS: '1000',
    LOG_LEVEL: 'info',
    ...extra,
  },
  { nodeArgs: process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [] },
);
const port = await svc.listening;
const client = processClient(port, ADMIN);
const tag = Math.random().toString(36).slice(2, 8);
const quiet = await integratorLoggedIn(client, dataDir, 'partner', `q-${tag}@example.com`, 86400);
const noisy = await integratorLoggedIn(client, dataDir, 'partner', `n-${tag}@example.com`, 86400);
for (const a of [quiet, noisy])
  await client.admin('webhookConfigs.upsert', {
    accountId: a.accountId,
    scope: 'partner',
    url: null,
    transformer: 'partner-format',
    version: '1.3.0',
  });
const url = `http://127.0.0.1:${port}/v3/partner-orders/paginated?page=1&pageSize=20`;
async function quietFor(seconds: number) {
  const lat: number[] = [];
  const t0 = performance.now();
  let i = 0;
  const pending: Promise<void>[] = [];
  while (performance.now() - t0 < seconds * 1000) {
    const due = t0 + i * 50;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    i++;
    pending.push(
      (async () => {
        const s = performance.now();
        const r = await fetch(url, { headers: { authorization: `Bearer ${quiet.token}` } });
        await r.arrayBuffer();
        if (r.status !== 200) console.log('quiet answered', r.status);
        lat.push(performance.now() - s);
      })(),
    );
  }
  await Promise.all(pending);
  lat.sort((a, b) => a - b);
  return `p50 ${lat[Math.floor(lat.length * 0.5)]!.toFixed(1)} p99 ${lat[Math.floor(lat.length * 0.99)]!.toFixed(1)} max ${lat.at(-1)!.toFixed(1)} n ${lat.length}`;
}
console.log('alone', await quietFor(15));
const PACE = process.env.FAIR_RATE && process.env.FAIR_RATE !== '0' ? process.env.FAIR_RATE : undefined;
const noise = PACE
  ? spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'bench/noise.ts',
        '--rate',
        PACE,
        '--connections',
        String(N),
        '--seconds',
        '20',
        '--header',
        `authorization=Bearer ${noisy.token}`,
        url,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
  : spawn(
      process.execPath,
      [
        'node_modules/autocannon/autocannon.js',
        '-j',
        '-c',
        String(N),
        '-d',
        '20',
        '-H',
        `authorization=Bearer ${noisy.token}`,
        url,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
let out = '';
noise.stdout.on('data', (d) => {
  out += d;
});
await new Promise((r) => setTimeout(r, 2000));
console.log(`noise c=${N}`, await quietFor(15));
await new Promise((r) => noise.on('exit', r));
const j = JSON.parse(/\{"url".*\}|\{"title".*\}/.exec(out)![0]);
console.log(
  'noise codes',
  JSON.stringify(
    Object.fromEntries(Object.entries(j.statusCodeStats).map(([c, v]) => [c, (v as { count: number }).count])),
  ),
  'skipped',
  j.skipped,
);
await svc.stop();
process.exit(0);
