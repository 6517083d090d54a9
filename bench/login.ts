// npm run bench:login — median answer time of POST /v3/auth/login for registered and unknown addresses.
// The real service as its own process (embedded database unless DATABASE_URL is set), one sequential client
// in this process on loopback, the two kinds interleaved at random so that deferred mail work falls on both alike.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from '../tests/support/process.ts';
import { median, percentile, writeSection } from './report.ts';

const N = Number(process.env.BENCH_LOGINS ?? 200);
const ADMIN = 'bench-admin-token-0123456789';
const dataDir = mkdtempSync(join(tmpdir(), 'pbi-bench-login-'));
const service = startService({
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : { PGLITE_DIR: 'memory://' }),
  DATA_DIR: dataDir,
  LOG_LEVEL: 'info',
  ADMIN_TOKEN: ADMIN,
  NODE_ENV: 'production',
  LOGIN_LIMIT_PER_EMAIL: '100000',
  LOGIN_LIMIT_PER_ADDRESS: '100000',
  JWT_SECRET: 'bench-secret-0123456789-0123456789-0123',
});
const base = `http://127.0.0.1:${await service.listening}`;
const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
};
const admin = async (name: string, input: unknown) =>
  (await post(`/trpc/admin.${name}`, input, { authorization: `Bearer ${ADMIN}` })).body.result.data;

const run = randomUUID().slice(0, 8);
const { id: accountId } = await admin('accounts.create', { name: 'bench partner', role: 'partner' });
const registered: string[] = [];
for (let i = 0; i < N; i++) {
  registered.push(`bench-${run}-${i}@registered.example`);
  await admin('contacts.create', { accountId, email: registered[i] });
}
const unknown = Array.from({ length: N }, (_, i) => `bench-${run}-${i}@unknown.example`);

async function login(email: string) {
  const started = process.hrtime.bigint();
  const { status } = await post('/v3/auth/login', { email });
  if (status !== 200) throw new Error(`login answered ${status}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

for (let i = 0; i < 50; i++) await login(`warmup-${i}@unknown.example`);
const plan = [
  ...registered.map((e) => ['registered', e] as const),
  ...unknown.map((e) => ['unknown', e] as const),
].sort(() => Math.random() - 0.5);
const times = { registered: [] as number[], unknown: [] as number[] };
for (const [kind, email] of plan) times[kind].push(await login(email));
await service.stop();
rmSync(dataDir, { recursive: true, force: true });

const database = process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded';
const r = median(times.registered);
const u = median(times.unknown);
const ratio = Math.max(r, u) / Math.min(r, u);
const fmt = (n: number) => n.toFixed(2);
const table = [
  '| addresses | logins | median ms | p95 ms |',
  '|---|---:|---:|---:|',
  `| registered, with API access (a mail is sent) | ${N} | ${fmt(r)} | ${fmt(percentile(times.registered, 0.95))} |`,
  `| unknown (nothing is sent) | ${N} | ${fmt(u)} | ${fmt(percentile(times.unknown, 0.95))} |`,
].join('\n');
const verdict = `Medians differ by ${((ratio - 1) * 100).toFixed(1)} % (target: within 10 %): ${ratio <= 1.1 ? 'met' : 'NOT met'}.`;
console.log(`${table}\n\n${verdict}`);
await writeSection(
  `Login timing: registered vs unknown addresses (${database} database)`,
  `
Command: \`${process.env.DATABASE_URL ? 'DATABASE_URL=postgres://… ' : ''}npm run bench:login\` (${new Date().toISOString().slice(0, 10)}; ${N} logins of each kind).
The service as its own process (\`server/main.ts\`), one sequential client on loopback, the two kinds interleaved at
random after 50 warm-up logins. The mail (file mailer) is composed and written after the answer.

${table}

${verdict}`,
);
process.exit(ratio <= 1.1 ? 0 : 1);
