// npm run bench:stalled-streams — what clients that open the legacy listing and stop reading take from another tenant.
// On PostgreSQL (DATABASE_URL of a scratch database): 10 accounts × 2 stalled streams, the trial that used to take all
// 20 connections of the pool; on the embedded database (no DATABASE_URL): one account's 2 stalled streams, the trial
// that used to stall the whole service. Another tenant polls its page of the listing alone and beside the streams,
// in alternating rounds of one run. Writes its section of docs/BENCHMARKS.md.
//
// The service is pinned to CPU 0 and this process (the clients) to CPU 1.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { integratorLoggedIn, mailedToken, processClient, startScript } from '../tests/support/process.ts';
import { codeLine, cpuSeconds, loadAverage, median, percentile, writeSection } from './report.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const POLLS = Number(process.env.BENCH_POLLS ?? 300);
const JOBS = Number(process.env.BENCH_JOBS ?? 2000);
const STALL_TIMEOUT_MS = 20_000;
const ACCOUNTS = DATABASE_URL ? 10 : 1;
// BENCH_NODE_ARGS: e.g. `--max-old-space-size=256`, to tell a leak from a heap that is merely let grow.
const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
const ADMIN_TOKEN = 'bench-admin-token-0123456789-0123456789';
try {
  execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
} catch {
  /* unpinned */
}

const dataDir = mkdtempSync(join(tmpdir(), 'pbi-stalled-'));
const service = startScript(
  'server/main.ts',
  {
    ...(DATABASE_URL ? { DATABASE_URL } : { PGLITE_DIR: join(dataDir, 'pglite') }),
    DATA_DIR: dataDir,
    NODE_ENV: 'production',
    ADMIN_TOKEN,
    JWT_SECRET: 'bench-secret-0123456789-0123456789-0123',
    LISTING_STALL_TIMEOUT_MS: String(STALL_TIMEOUT_MS),
    LOGIN_LIMIT_PER_EMAIL: '1000',
    LOGIN_LIMIT_PER_ADDRESS: '1000',
    API_RATE_LIMIT_PER_ACCOUNT: '1000000',
  },
  { cpu: 0, nodeArgs },
);
process.on('exit', () => {
  service.child.kill();
  rmSync(dataDir, { recursive: true, force: true });
}); // a failed run leaves nothing behind
const port = await service.listening;
const client = processClient(port, ADMIN_TOKEN);
const pid = service.child.pid!;

const serviceCpu = () => cpuSeconds(pid);
const serviceRssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

// A master partner whose scope is larger than the buffers between a stalled client and the service (about 4 MB),
// children of it that read the master's scope, and another tenant with a small listing of its own.
const tag = randomUUID().slice(0, 8); // a database of an earlier run may hold the same addresses
const partnerConfig = { scope: 'partner', transformer: 'partner-format', version: '1.3.0' };
const master = await integratorLoggedIn(client, dataDir, 'partner', `stalled-master-${tag}@example.com`, 86_400);
await client.admin('webhookConfigs.upsert', { accountId: master.accountId, ...partnerConfig });
const brand = await client.admin<{ id: string }>('accounts.create', { name: 'Bench brand', role: 'brand' });
const wide = 'x'.repeat(200);
const products = Array.from({ length: 12 }, (_, i) => ({ sku: `${i}${wide.slice(3)}`, name: wide, quantity: 1 }));
for (let i = 0; i < JOBS; i += 20) {
  await Promise.all(
    Array.from({ length: Math.min(20, JOBS - i) }, (_, k) =>
      client.admin('jobs.create', {
        brandAccountId: brand.id,
        partnerId: master.accountId,
        apiId: `stalled-${tag}-${i + k}`,
        status: 'accepted',
        products,
      }),
    ),
  );
}
const readers = [master];
for (let i = 1; i < ACCOUNTS; i++) {
  const { id } = await client.admin<{ id: string }>('accounts.create', {
    name: `Reader ${i}`,
    role: 'partner',
    parentId: master.accountId,
  });
  const email = `stalled-reader-${i}-${tag}@example.com`;
  await client.admin('contacts.create', { accountId: id, email });
  await client.rest('/v3/auth/login', { method: 'POST', body: JSON.stringify({ email }) });
  const refresh = await mailedToken(dataDir, email);
  const res = await client.rest('/v3/auth/access-token', {
    method: 'POST',
    body: JSON.stringify({ expires_after: 86_400 }),
    token: refresh,
  });
  readers.push({ accountId: id, token: ((await res.json()) as { access_token: string }).access_token });
}
const other = await integratorLoggedIn(client, dataDir, 'partner', `stalled-other-${tag}@example.com`, 86_400);
await client.admin('webhookConfigs.upsert', { accountId: other.accountId, ...partnerConfig });
for (let i = 0; i < 3; i++)
  await client.admin('jobs.create', { brandAccountId: brand.id, partnerId: other.accountId, status: 'accepted' });
const pollPath = '/v3/partner-orders/paginated?pageSize=3';

/** Opens the legacy listing, takes its first bytes, then reads nothing until `rest` (which reads to the end). */
async function stalledStream(token: string) {
  const socket = net.connect(port, '127.0.0.1');
  socket.write(`GET /v3/partner-orders HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\n\r\n`);
  const first = await new Promise<Buffer>((resolve, reject) => {
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve(chunk);
    });
    socket.once('error', reject);
  });
  if (first.toString('latin1', 0, 12) !== 'HTTP/1.1 200')
    throw new Error(`the listing answered ${first.toString('latin1', 0, 40)}`);
  let bytes = first.length;
  let ended = ''; // the last bytes: a chunked answer that was completed ends with its last chunk, 0 CRLF CRLF
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    ended = (ended + chunk.toString('latin1')).slice(-16);
  });
  const closedAt = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  return {
    rest: async () => {
      socket.resume();
      const at = await closedAt;
      return { at, bytes, complete: ended.endsWith('0\r\n\r\n') };
    },
  };
}

/** Until the service is nearly idle: the streams have filled the buffers to their clients and wait. */
async function quiet() {
  for (let i = 0; i < 80; i++) {
    const before = serviceCpu();
    await new Promise((resolve) => setTimeout(resolve, 250));
    const used = serviceCpu() - before;
    if (!Number.isFinite(used)) throw new Error('the service is gone');
    if (used < 0.05) return;
  }
  throw new Error('the service never fell quiet after the streams started');
}

/** Sequential polls of the other tenant: statuses and times in ms. */
async function poll(count: number) {
  const statuses: Record<number, number> = {};
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const res = await client.rest(pollPath, { token: other.token });
    await res.arrayBuffer();
    times.push(performance.now() - started);
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  }
  return { statuses, times };
}

interface Round {
  alone: number[];
  beside: number[];
  besideStatuses: Record<number, number>;
  aloneStatuses: Record<number, number>;
  streamMb: number;
  idleCpuMs: number;
  rssMb: number;
  dropAfterS: number[];
  cut: boolean;
}
const loadAtStart = loadAverage();
await poll(50); // warm-up
const rounds: Round[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const alone = await poll(POLLS);
  const openedAt = Date.now();
  const streams = await Promise.all(
    readers.flatMap((reader) => [reader, reader]).map((reader) => stalledStream(reader.token)),
  );
  await quiet();
  const beside = await poll(POLLS);
  // The service's own CPU over one idle second with every stream held: what a stalled stream costs while it waits.
  const idleBefore = serviceCpu();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const idleCpuMs = (serviceCpu() - idleBefore) * 1000;
  const rssMb = serviceRssMb();
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, STALL_TIMEOUT_MS - (Date.now() - openedAt) + 3000)));
  const ends = await Promise.all(streams.map((s) => s.rest()));
  rounds.push({
    alone: alone.times,
    aloneStatuses: alone.statuses,
    beside: beside.times,
    besideStatuses: beside.statuses,
    streamMb: median(ends.map((e) => e.bytes)) / 1e6,
    idleCpuMs,
    rssMb,
    dropAfterS: ends.map((e) => (e.at - openedAt) / 1000),
    cut: ends.every((e) => !e.complete),
  });
  process.stdout.write(
    `round ${r + 1}: alone p99 ${percentile(alone.times, 0.99).toFixed(1)} ms, beside p99 ${percentile(beside.times, 0.99).toFixed(1)} ms, beside ${JSON.stringify(beside.statuses)}\n`,
  );
}
await service.stop();
rmSync(dataDir, { recursive: true, force: true });

const ms = (x: number) => x.toFixed(1);
const statuses = (s: Record<number, number>) =>
  Object.entries(s)
    .map(([k, v]) => `${v} × ${k}`)
    .join(', ');
const rows = rounds.map(
  (r, i) =>
    `| ${i + 1} | ${ms(median(r.alone))} / ${ms(percentile(r.alone, 0.99))} | ${ms(median(r.beside))} / ${ms(percentile(r.beside, 0.99))} ` +
    `| **${(percentile(r.beside, 0.99) / percentile(r.alone, 0.99)).toFixed(2)}×** | ${statuses(r.besideStatuses)} | ${ms(Math.max(...r.beside))} ` +
    `| ${r.streamMb.toFixed(1)} | ${r.idleCpuMs.toFixed(0)} | ${r.rssMb.toFixed(0)} | ${Math.min(...r.dropAfterS).toFixed(1)}–${Math.max(...r.dropAfterS).toFixed(1)} | ${r.cut ? 'yes' : '**no**'} |`,
);
const pooled = { alone: rounds.flatMap((r) => r.alone), beside: rounds.flatMap((r) => r.beside) };
rows.push(
  `| all rounds | ${ms(median(pooled.alone))} / ${ms(percentile(pooled.alone, 0.99))} | ${ms(median(pooled.beside))} / ${ms(percentile(pooled.beside, 0.99))} ` +
    `| **${(percentile(pooled.beside, 0.99) / percentile(pooled.alone, 0.99)).toFixed(2)}×** | | | | | | | |`,
);
const database = DATABASE_URL ? 'PostgreSQL' : 'embedded database';
const worst = percentile(pooled.beside, 0.99) / percentile(pooled.alone, 0.99);
const non200 = rounds.reduce((n, r) => n + r.beside.length - (r.besideStatuses[200] ?? 0), 0);
const slowest = Math.max(...rounds.flatMap((r) => r.beside));
await writeSection(
  `Stalled legacy streams (${database})`,
  `
Command: \`${DATABASE_URL ? 'DATABASE_URL=postgres://…/<scratch database> ' : ''}npm run bench:stalled-streams\` (${new Date().toISOString().slice(0, 10)}; ${ROUNDS} rounds, ${POLLS} polls per phase; load average ${loadAtStart.toFixed(2)} at the start, ${loadAverage().toFixed(2)} at the end: 2 fills both cores).
${codeLine()}

Trial: ${ACCOUNTS} account${ACCOUNTS > 1 ? 's' : ''} × 2 legacy listings \`GET /v3/partner-orders\` of a ${JOBS}-order scope (${rounds[0]!.streamMb.toFixed(1)} MB
each, what the service sent before the stall filled the buffers), whose clients take the first bytes and read nothing more. Another tenant polls
its own \`${pollPath}\` one request after another, alone and then beside the held streams, in each round (the service
on CPU 0, the clients on CPU 1). \`LISTING_STALL_TIMEOUT_MS=${STALL_TIMEOUT_MS}\`: the stalled clients are dropped after it.
${DATABASE_URL ? 'The pool has 20 connections (the default): before issue 23 these 20 streams held all of them, and the other tenant got 503 for about 30 s.' : 'One connection: before issue 23 one stream that was not read stalled the whole service, worker included, for about 30 s.'}

| round | alone p50 / p99 ms | beside the streams p50 / p99 ms | p99 beside / alone | other tenant's answers beside | slowest beside ms | sent per stream before its drop, MB | service CPU per idle second, streams held, ms | service RSS MB | streams dropped after s | cut short |
|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|
${rows.join('\n')}

Targets (issue 23): ${
    DATABASE_URL
      ? `0 × 503 beside the streams: ${non200 === 0 ? 'met' : `**NOT met** (${non200} not 200)`}; p99 within 2× of the same run without them: ${worst.toFixed(2)}× over all rounds (${worst <= 2 ? 'met' : '**NOT met**'})`
      : `other requests answered within 1 s beside a stalled stream: slowest ${ms(slowest)} ms (${slowest < 1000 ? 'met' : '**NOT met**'}); ${non200 === 0 ? 'every answer 200' : `**${non200} not 200**`}`
  }.
A stream holds no database connection while it waits (keyset batches, each a short statement, written with
backpressure), so the streams cost the service nothing while they are held; each is dropped ${STALL_TIMEOUT_MS / 1000} s after
its client stopped reading (the drop comes after the last write that filled the buffers, so a little after the timeout).
`,
);
process.stdout.write('section written\n');
