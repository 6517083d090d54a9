// npm run bench:soak — the whole service under a steady mixed load for minutes: errors, lost webhook events, latency
// per endpoint and memory growth; and fairness (one tenant's latency while another hammers the service).
//
// With DATABASE_URL: 2 `api` processes and 1 `worker` process (the real server/main.ts), SOAK_SECONDS (default 300) of
// mixed load at SOAK_RATE requests/s (default 100) in an open loop over both api processes, then the fairness phase.
// Without DATABASE_URL (or with SOAK_EMBEDDED=1): one `SERVICE_ROLE=all` process on the embedded database with a data
// folder of its own, SOAK_BURSTS (default 3) bursts of SOAK_BURST_SECONDS (default 60) at SOAK_EMBEDDED_RATE (default
// 30), each after an idle gap of SOAK_IDLE_SECONDS (default 60). Either run writes its section of docs/BENCHMARKS.md.
//
// A trial: `SOAK_SECONDS=20 SOAK_WARMUP_SECONDS=5 SOAK_FAIRNESS_SECONDS=10 SOAK_FAIRNESS_ROUNDS=1 SOAK_IDLE_SECONDS=10 SOAK_BURST_SECONDS=10`.
// SOAK_NO_WRITE=1 prints the section instead of writing it.
//
// Webhooks go to bench/receiver.ts in a process of its own (this process only sends requests and reads answers, so
// that its timers stay on time); the rate-limit noise of the fairness phase is autocannon in a process of its own too.
// Nothing is pinned: the service processes, PostgreSQL, the receiver and the load share the 2 cores as they come.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { integratorLoggedIn, processClient, startScript, type ServiceProcess } from '../tests/support/process.ts';
import { median, percentile, writeSection } from './report.ts';

const env = process.env;
const num = (name: string, fallback: number) => {
  const value = Number(env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};
const DATABASE_URL = env.DATABASE_URL;
const EMBEDDED = env.SOAK_EMBEDDED === '1' || !DATABASE_URL;
const SECONDS = num('SOAK_SECONDS', 300);
const RATE = num('SOAK_RATE', 100);
const WARMUP_SECONDS = num('SOAK_WARMUP_SECONDS', 20);
const FAIRNESS_SECONDS = num('SOAK_FAIRNESS_SECONDS', 30);
// Alone and under the paced noise, alternately, this many times; judged on the median round. The machine's own slow
// moments (its disk stalling for a second, every commit waiting on it) fall on one phase or the other at random, and
// one such second in one phase moves that phase's p99 tenfold: the median round is the noisy tenant's effect.
const FAIRNESS_ROUNDS = num('SOAK_FAIRNESS_ROUNDS', 5);
const QUIET_RATE = num('SOAK_QUIET_RATE', 20);
const NOISE_CONNECTIONS = num('SOAK_NOISE_CONNECTIONS', 32);
// The noisy tenant's pace in the judged part of the fairness phase: 20× its share (API_RATE_LIMIT_PER_ACCOUNT, 50/s).
const NOISE_RATE = num('SOAK_NOISE_RATE', 1000);
const BURSTS = num('SOAK_BURSTS', 3);
const BURST_SECONDS = num('SOAK_BURST_SECONDS', 60);
const IDLE_SECONDS = num('SOAK_IDLE_SECONDS', 60);
const EMBEDDED_RATE = num('SOAK_EMBEDDED_RATE', 30);
const JOBS = num('SOAK_JOBS', 40);
const DRAIN_TIMEOUT_SECONDS = num('SOAK_DRAIN_TIMEOUT_SECONDS', 180);
const NO_WRITE = env.SOAK_NO_WRITE === '1';
/** An account is kept at this many requests a second at most: well under its share of 50/s (a fixed 1 s window). */
const PER_ACCOUNT_CAP = 20;
const RSS_GROWTH_TARGET = 10;
const FAIRNESS_TARGET = 2;

const root = join(import.meta.dirname, '..');
const ADMIN = 'bench-admin-token-0123456789';
const tag = randomUUID().slice(0, 8);
const dataDir = mkdtempSync(join(tmpdir(), 'pbi-bench-soak-'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const since = (t0: number) => ((performance.now() - t0) / 1000).toFixed(0);
/**
 * The time some task of the machine waited on the disk so far (Linux's /proc/pressure/io, "some"), in ms; NaN where
 * it is not kept. A commit waits for its WAL's flush, so while the disk stalls, every write waits too.
 */
const diskStallMs = () => {
  try {
    return Number(/some .*total=(\d+)/.exec(readFileSync('/proc/pressure/io', 'utf8'))![1]) / 1000;
  } catch {
    return NaN;
  }
};

// ---------------------------------------------------------------------------------------------------------------
// Processes: every one started here is killed when this process ends, however it ends.

const started: { proc: ServiceProcess; name: string }[] = [];
const children: ChildProcess[] = [];
let stopping = false;
process.on('exit', () => {
  for (const { proc } of started) proc.child.kill('SIGKILL');
  for (const child of children) child.kill('SIGKILL');
});
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));

interface Watched { name: string; proc: ServiceProcess; errorLines: number; samples: string[]; died: number | null | undefined }
const watched: Watched[] = [];
/** Starts a script and counts the error and fatal lines of its log (pino levels 50 and 60) as they come. */
// BENCH_NODE_ARGS: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, for the service processes (not the receiver).
const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];

function launch(name: string, script: string, settings: Record<string, string>): Watched {
  const proc = startScript(script, settings, { nodeArgs: script === 'server/main.ts' ? nodeArgs : [] });
  started.push({ proc, name });
  const w: Watched = { name, proc, errorLines: 0, samples: [], died: undefined };
  for (const stream of [proc.child.stdout!, proc.child.stderr!]) {
    let partial = '';
    stream.on('data', (d: Buffer) => {
      const lines = (partial + d).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (!/"level":(50|60)/.test(line)) continue;
        w.errorLines++;
        if (w.samples.length < 3) w.samples.push(line.slice(0, 700));
      }
    });
  }
  void proc.exited.then((code) => { if (!stopping) { w.died = code; console.error(`${name} exited with ${code} during the run`); } });
  watched.push(w);
  return w;
}

const serviceEnv = (role: 'api' | 'worker' | 'all'): Record<string, string> => ({
  ...(EMBEDDED ? { PGLITE_DIR: join(dataDir, 'pglite') } : { DATABASE_URL: DATABASE_URL! }),
  DATA_DIR: dataDir, NODE_ENV: 'production', JWT_SECRET: 'bench-secret-0123456789-0123456789-0123', ADMIN_TOKEN: ADMIN,
  SERVICE_ROLE: role, WEBHOOK_ALLOW_PRIVATE_TARGETS: '1', LOGIN_LIMIT_PER_EMAIL: '1000', LOGIN_LIMIT_PER_ADDRESS: '1000',
  // API_RATE_LIMIT_PER_ACCOUNT (50/s) and API_CONCURRENCY_PER_ACCOUNT (4) are left at their defaults: the fairness phase measures them.
  LOG_LEVEL: 'info',
});

/** Resident memory (MB) and CPU time used so far (s) of a process, from /proc. */
function rssMb(pid: number) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}
function cpuSeconds(pid: number) {
  let stat: string;
  try { stat = readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { return NaN; } // gone
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in ticks of 1/100 s (CLK_TCK)
}

/** The machine's load average over the last minute (other users of the machine included). */
const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

/** Whether the PostgreSQL server runs on this machine: only then are its backends' process ids ours to read. */
const LOCAL_DATABASE = !!DATABASE_URL && ['127.0.0.1', 'localhost', '[::1]', ''].includes(new URL(DATABASE_URL).hostname);
/** CPU seconds used so far by the PostgreSQL backends serving this database (none known when the server is elsewhere). */
async function databaseCpu(db: pg.Client) {
  if (!LOCAL_DATABASE) return new Map<number, number>();
  const { rows } = await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
  return new Map(rows.map(({ pid }) => [pid, cpuSeconds(pid)]).filter(([, cpu]) => Number.isFinite(cpu)) as [number, number][]);
}
/** CPU used between two readings: the backends of both, plus all of any that came in between (NaN: not measured). */
function cpuBetween(before: Map<number, number>, after: Map<number, number>) {
  if (!after.size) return NaN;
  let total = 0;
  for (const [pid, cpu] of after) total += cpu - (before.get(pid) ?? 0);
  return total;
}

/**
 * What the database's sessions are doing, sampled every 2 s until stopped: how often an active session was seen in each
 * wait (type/event; "CPU/running" when none), to tell a queue on locks or I/O from a queue on the CPU.
 */
function databaseWaits(db: pg.Client) {
  const seen = new Map<string, number>();
  let samples = 0;
  let on = true;
  const loop = (async () => {
    while (on) {
      const { rows } = await db.query<{ wait: string; n: number }>(`select coalesce(wait_event_type, 'CPU') || '/' || coalesce(wait_event, 'running') as wait,
        count(*)::int as n from pg_stat_activity where datname = current_database() and state = 'active' and pid <> pg_backend_pid() group by 1`);
      samples++;
      for (const { wait, n } of rows) seen.set(wait, (seen.get(wait) ?? 0) + n);
      await sleep(2000);
    }
  })();
  return async () => {
    on = false;
    await loop;
    const top = [...seen].sort(([, a], [, b]) => b - a).slice(0, 6);
    return `${samples} samples, ${top.length ? top.map(([wait, n]) => `${wait} ${(n / samples).toFixed(1)}`).join(', ') : 'no active session'}`;
  };
}

/** A process's /metrics (Prometheus text), as { 'name{labels}': value }. */
async function metricsOf(port: number) {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const values: Record<string, number> = {};
  for (const line of (await res.text()).split('\n')) {
    const match = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match) values[match[1]!] = Number(match[2]);
  }
  return values;
}
const sumOf = (values: Record<string, number>, name: string, labels: RegExp = /.*/) =>
  Object.entries(values).filter(([k]) => k.startsWith(`${name}{`) && labels.test(k)).reduce((a, [, v]) => a + v, 0);

// ---------------------------------------------------------------------------------------------------------------
// Tenants: a brand and a partner with its jobs, both with a signed webhook configuration whose URL is the receiver.

/**
 * An account as the load generator sees it: its token, its feed cursor, its answered _cids, and its legacy listings
 * under way, each with the most of the account's other listings that were under way at any moment of its own.
 */
interface Account { id: string; token: string; feed: string | null; cids: string[]; listings: Set<{ peak: number }> }
interface Tenant { label: string; brand: Account; partner: Account; jobs: string[]; key: string; offset: number; n: number }

async function makeTenant(client: ReturnType<typeof processClient>, receiverBase: string, label: string, offset: number): Promise<Tenant> {
  const key = `soak-key-${label}-${tag}`;
  const account = async (role: 'brand' | 'partner'): Promise<Account> => {
    const { accountId, token } = await integratorLoggedIn(client, dataDir, role, `soak-${label}-${role}-${tag}@example.com`, 86_400);
    // The configuration comes before any job, so that every event of the tenant has a delivery.
    await client.admin('webhookConfigs.upsert', {
      accountId, scope: role, url: `${receiverBase}/hooks/${label}/${role}`, signatureKey: key, version: '1.3.0',
      transformer: role === 'partner' ? 'partner-format' : 'default',
    });
    return { id: accountId, token, feed: null, cids: [], listings: new Set() };
  };
  const brand = await account('brand');
  const partner = await account('partner');
  const jobs: string[] = [];
  for (let j = 0; j < JOBS; j++) {
    const apiId = `soak-${tag}-${label}-${j}`;
    await client.admin('jobs.create', { brandAccountId: brand.id, partnerId: partner.id, apiId, status: 'accepted' });
    jobs.push(apiId);
  }
  return { label, brand, partner, jobs, key, offset, n: 0 };
}

// ---------------------------------------------------------------------------------------------------------------
// The mix: 100 slots per tenant cycle, in a fixed shuffled order, so that an account's requests of one kind are spread.

const KINDS = {
  paginated: 'GET /v3/partner-orders/paginated',
  legacy: 'GET /v3/partner-orders (streamed, whole scope)',
  order: 'GET /v3/poll/job/*/{id}',
  appointment: 'POST /v3/commands/partner/appointment (signed)',
  yourOrderId: 'POST /v3/commands/partner/your-order-id (signed)',
  brandCommand: 'POST /v3/commands',
  commandResult: 'GET /v3/commands/{cid}',
  feed: 'GET /v3/events',
} as const;
type Kind = keyof typeof KINDS;
type Side = 'brand' | 'partner';
const WEIGHTS: [Kind, Side, number][] = [
  ['paginated', 'partner', 18], ['legacy', 'partner', 8], ['order', 'partner', 9], ['order', 'brand', 9],
  ['appointment', 'partner', 8], ['yourOrderId', 'partner', 4], ['brandCommand', 'brand', 14],
  ['commandResult', 'brand', 10], ['commandResult', 'partner', 4], ['feed', 'partner', 8], ['feed', 'brand', 8],
];
const SLOTS: [Kind, Side][] = WEIGHTS.flatMap(([kind, side, w]) => Array.from({ length: w }, () => [kind, side] as [Kind, Side]));
{
  let seed = 20261123; // mulberry32: the same order on every run
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = SLOTS.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [SLOTS[i], SLOTS[j]] = [SLOTS[j]!, SLOTS[i]!];
  }
}
const PARTNER_SHARE = WEIGHTS.filter(([, side]) => side === 'partner').reduce((a, [, , w]) => a + w, 0) / 100;
const WRITE_SHARE = WEIGHTS.filter(([kind]) => kind === 'appointment' || kind === 'yourOrderId' || kind === 'brandCommand').reduce((a, [, , w]) => a + w, 0) / 100;
/** Enough tenants (2 at least) that no account gets more than PER_ACCOUNT_CAP requests a second. */
const tenantsFor = (rate: number) => Math.max(2, Math.ceil((rate * PARTNER_SHARE) / PER_ACCOUNT_CAP));

interface Request { kind: Kind; method: 'GET' | 'POST'; path: string; token: string; body?: string; headers?: Record<string, string>;
  expect: number[]; read?: (body: string) => boolean;
  /** Called once the exchange is over, with the status (null: no answer). */
  done?: (status: number | null) => void;
  /** Whether a 429 is the service's right answer (a third legacy listing of the account), decided at the answer. */
  allow429?: () => boolean }

const BRAND_COMMANDS = ['RefreshOrder', 'UpdateOrderExternalId', 'UpdateCustomer'] as const;
function requestFor(tenant: Tenant, kind: Kind, side: Side): Request {
  const n = tenant.n++;
  const who = tenant[side];
  const job = tenant.jobs[n % tenant.jobs.length]!;
  const get = (path: string, extra: Partial<Request> = {}): Request => ({ kind, method: 'GET', path, token: who.token, expect: [200], ...extra });
  const post = (path: string, command: Record<string, unknown>, expect: number, signed: boolean): Request => {
    const body = JSON.stringify(command);
    return {
      kind, method: 'POST', path, token: who.token, body, expect: [expect],
      ...(signed && { headers: { 'x-webhook-signature': createHmac('sha256', tenant.key).update(body).digest('hex') } }),
      // A _cid is polled only once its command was answered: before that it may not exist yet.
      done: (status) => { if (status === expect) { who.cids.push(command._cid as string); if (who.cids.length > 50) who.cids.shift(); } },
    };
  };
  switch (kind) {
    case 'paginated':
      return get(`/v3/partner-orders/paginated?page=${(n % 2) + 1}&pageSize=20${n % 3 === 0 ? '&active=true' : ''}`);
    case 'legacy': {
      // At most 2 legacy listings of an account stream at once (CONTRACT §1). The service takes a listing's slot only
      // after its token check and scope query, on either api process, so a listing sent later may take a slot first:
      // a 429 is right for a listing when, at some moment between its sending and its answer, 2 other listings of the
      // account were under way here.
      const me = { peak: who.listings.size };
      for (const other of who.listings) other.peak = Math.max(other.peak, who.listings.size);
      who.listings.add(me);
      // The whole scope, streamed from a cursor: a cut answer is invalid JSON, so the body is checked.
      return get('/v3/partner-orders', {
        allow429: () => me.peak >= 2,
        read: (body) => { const list = JSON.parse(body) as unknown[]; return Array.isArray(list) && list.length === tenant.jobs.length; },
        done: () => { who.listings.delete(me); },
      });
    }
    case 'order':
      return get(`/v3/poll/job/*/${encodeURIComponent(job)}`);
    case 'appointment': {
      const day = String(1 + (n % 28)).padStart(2, '0');
      return post('/v3/commands/partner/appointment', {
        _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobAppointment', jobApiId: job,
        appointmentStart: `2027-01-${day}T09:00:00+01:00`, appointmentEnd: `2027-01-${day}T11:00:00+01:00`,
      }, 200, true);
    }
    case 'yourOrderId':
      return post('/v3/commands/partner/your-order-id', {
        _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobYourOrderId', jobApiId: job, yourOrderID: `PO-${tag}-${tenant.label}-${n}`,
      }, 200, true);
    case 'brandCommand': {
      const type = BRAND_COMMANDS[n % BRAND_COMMANDS.length]!;
      const extra = type === 'UpdateOrderExternalId' ? { externalId: `EXT-${n}` }
        : type === 'UpdateCustomer' ? { customer: { firstName: `Alex ${n}`, email: `customer-${n}@example.com` } } : {};
      return post('/v3/commands', { _v: '1.0.0', _cid: randomUUID(), _type: type, orderId: job, ...extra }, 202, false);
    }
    case 'commandResult': {
      // The newest answered command (a brand's may still wait: 204), or one of the last 50.
      const cid = n % 2 === 0 ? who.cids.at(-1) : who.cids[n % Math.max(1, who.cids.length)];
      if (!cid) return requestFor(tenant, 'order', side); // nothing sent yet by this account
      return get(`/v3/commands/${cid}`, { expect: [200, 204] });
    }
    case 'feed':
      return get(`/v3/events?limit=100${who.feed ? `&after=${encodeURIComponent(who.feed)}` : ''}`, {
        read: (body) => {
          const page = JSON.parse(body) as { items: unknown[]; next: string | null };
          if (page.next) who.feed = page.next;
          return Array.isArray(page.items);
        },
      });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The open loop: request i leaves at start + i / rate whatever the answers before it; latency is counted from that
// scheduled time to the last byte of the answer (a late start counts against the service, not for it).

interface KindStats { latencies: number[]; statuses: Map<number, number>; errors: number; connectionErrors: number }
class Stats {
  kinds = new Map<Kind, KindStats>();
  lateness: number[] = [];
  sent = 0;
  /** The first answers, in the order they came. */
  first: string[] = [];
  /** 429s to a third legacy listing while two of the account's stream: the limit at work, not errors. */
  rightly429 = 0;
  of(kind: Kind) {
    let s = this.kinds.get(kind);
    if (!s) this.kinds.set(kind, s = { latencies: [], statuses: new Map(), errors: 0, connectionErrors: 0 });
    return s;
  }
  get errors() { return [...this.kinds.values()].reduce((a, s) => a + s.errors, 0); }
  get latencies() { return [...this.kinds.values()].flatMap((s) => s.latencies); }
  status(code: number) { return [...this.kinds.values()].reduce((a, s) => a + (s.statuses.get(code) ?? 0), 0); }
  /** Several phases' answers as one (their latencies, statuses and errors). */
  static pooled(all: Stats[]) {
    const pooled = new Stats();
    for (const stats of all) {
      pooled.sent += stats.sent;
      pooled.rightly429 += stats.rightly429;
      pooled.lateness.push(...stats.lateness);
      for (const [kind, s] of stats.kinds) {
        const into = pooled.of(kind);
        into.latencies.push(...s.latencies);
        into.errors += s.errors;
        into.connectionErrors += s.connectionErrors;
        for (const [code, n] of s.statuses) into.statuses.set(code, (into.statuses.get(code) ?? 0) + n);
      }
    }
    return pooled;
  }
}

/** What the noise process reports (bench/noise.ts, or autocannon's JSON). */
interface NoiseResult { duration: number; errors: number; skipped?: number; statusCodeStats: Record<string, { count: number }> }
/** Several noise runs as one. */
function addResults(all: NoiseResult[]): NoiseResult {
  const statusCodeStats: Record<string, { count: number }> = {};
  for (const r of all) for (const [code, { count }] of Object.entries(r.statusCodeStats)) statusCodeStats[code] = { count: (statusCodeStats[code]?.count ?? 0) + count };
  const skipped = all.every((r) => r.skipped === undefined) ? undefined : all.reduce((a, r) => a + (r.skipped ?? 0), 0);
  return { duration: all.reduce((a, r) => a + r.duration, 0), errors: all.reduce((a, r) => a + r.errors, 0), skipped, statusCodeStats };
}
const errorSamples: string[] = [];

interface Target { name: string; port: number; agent: http.Agent }
const targetOf = (name: string, port: number): Target => ({ name, port, agent: new http.Agent({ keepAlive: true, maxSockets: 256 }) });

function fire(target: Target, r: Request, scheduled: number, stats: Stats, phase: string) {
  const s = stats.of(r.kind);
  const fail = (what: string) => {
    s.errors++;
    if (errorSamples.length < 12) errorSamples.push(`${phase}, ${KINDS[r.kind]} via ${target.name}: ${what}`.slice(0, 600));
  };
  return new Promise<void>((resolve) => {
    let settled = false;
    const settle = (then: () => void) => { if (!settled) { settled = true; then(); } resolve(); };
    const req = http.request({
      host: '127.0.0.1', port: target.port, path: r.path, method: r.method, agent: target.agent,
      headers: {
        authorization: `Bearer ${r.token}`, ...r.headers,
        ...(r.body !== undefined && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(r.body) }),
      },
    }, (res) => {
      const status = res.statusCode ?? 0;
      const rightly429 = status === 429 && r.allow429?.() === true;
      const expected = r.expect.includes(status) || rightly429;
      const keep = !expected || r.read !== undefined;
      const chunks: Buffer[] = [];
      if (keep) res.on('data', (d: Buffer) => chunks.push(d));
      else res.resume();
      res.on('end', () => settle(() => {
        const latency = performance.now() - scheduled;
        s.latencies.push(latency);
        s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
        if (stats.first.length < 5) stats.first.push(`${status} in ${ms(latency)} ms`);
        const body = keep ? Buffer.concat(chunks).toString('utf8') : '';
        if (!expected) fail(`${status} ${body.slice(0, 400)}`);
        else if (rightly429) stats.rightly429++;
        else if (r.read) {
          let good = false;
          try { good = r.read(body); } catch { /* invalid JSON: a cut answer */ }
          if (!good) fail(`${status} with an answer that does not hold (${body.length} bytes: …${body.slice(-120)})`);
        }
        r.done?.(status);
      }));
      const cut = (what: string) => settle(() => { s.connectionErrors++; fail(`${status}, answer cut: ${what}`); r.done?.(null); });
      res.on('error', (error) => cut(error.message));
      res.on('close', () => { if (!res.complete) cut('closed before its end'); });
    });
    req.setTimeout(60_000, () => req.destroy(new Error('no answer within 60 s')));
    req.on('error', (error) => settle(() => {
      s.connectionErrors++;
      fail(`connection error ${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}`);
      if (stats.first.length < 5) stats.first.push(`connection error ${(error as NodeJS.ErrnoException).code ?? error.message}`);
      r.done?.(null);
    }));
    req.end(r.body);
  });
}

async function openLoop(o: { seconds: number; rate: number; tenants: Tenant[]; targets: Target[]; stats: Stats; phase: string }) {
  const pending = new Set<Promise<void>>();
  const begun = performance.now();
  for (let i = 0; ; i++) {
    const due = begun + (i * 1000) / o.rate;
    if (due - begun >= o.seconds * 1000) break;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    else if (i % 16 === 0) await new Promise((resolve) => setImmediate(resolve)); // behind: still let answers in
    // Tenants take turns; each walks its own cycle of the slots, and each of its requests goes to the next api process.
    const tenant = o.tenants[i % o.tenants.length]!;
    const round = Math.floor(i / o.tenants.length);
    const [kind, side] = SLOTS[(round + tenant.offset) % SLOTS.length]!;
    const target = o.targets[round % o.targets.length]!;
    o.stats.lateness.push(performance.now() - due);
    o.stats.sent++;
    const p = fire(target, requestFor(tenant, kind, side), due, o.stats, o.phase);
    pending.add(p);
    void p.then(() => pending.delete(p));
  }
  await Promise.all(pending);
}

// ---------------------------------------------------------------------------------------------------------------
// Memory and CPU of the processes under test, sampled every 5 s.

interface Sampled { name: string; pid: number; startRss: number; endRss: number; maxRss: number; cpu0: number; cpu1: number; trend: number[] }
function sampler(procs: { name: string; pid: number }[]) {
  const rows: Sampled[] = procs.map(({ name, pid }) => ({ name, pid, startRss: NaN, endRss: NaN, maxRss: 0, cpu0: NaN, cpu1: NaN, trend: [] }));
  let timer: NodeJS.Timeout | undefined;
  let t0 = 0;
  const sample = () => { for (const r of rows) { const rss = rssMb(r.pid); r.maxRss = Math.max(r.maxRss, rss); r.trend.push(rss); } };
  return {
    rows,
    start() {
      t0 = performance.now();
      for (const r of rows) { r.startRss = rssMb(r.pid); r.maxRss = r.startRss; r.cpu0 = cpuSeconds(r.pid); r.trend = [r.startRss]; }
      timer = setInterval(sample, 5000);
    },
    end() {
      clearInterval(timer);
      for (const r of rows) { r.endRss = rssMb(r.pid); r.maxRss = Math.max(r.maxRss, r.endRss); r.cpu1 = cpuSeconds(r.pid); r.trend.push(r.endRss); }
      return (performance.now() - t0) / 1000;
    },
  };
}
const growth = (r: Sampled) => ((r.endRss - r.startRss) / r.startRss) * 100;

// ---------------------------------------------------------------------------------------------------------------
// After the load: every event stored for the tenants must have reached the receiver.

async function untilDrained(port: number, receiver: () => Promise<{ distinct: number }>) {
  const t0 = performance.now();
  let quiet = 0;
  let last = -1;
  for (;;) {
    const m = await metricsOf(port);
    const pending = (m.webhook_deliveries_pending ?? NaN) + (m['commands{state="accepted"}'] ?? 0) + (m['commands{state="running"}'] ?? 0);
    const { distinct } = await receiver();
    quiet = pending === 0 && distinct === last ? quiet + 1 : 0;
    last = distinct;
    if (quiet >= 2) return (performance.now() - t0) / 1000;
    if (performance.now() - t0 > DRAIN_TIMEOUT_SECONDS * 1000) {
      console.error(`not drained after ${DRAIN_TIMEOUT_SECONDS} s: ${pending} deliveries and commands still pending`);
      return NaN;
    }
    await sleep(1000);
  }
}

interface StoredEvent { id: string; account: string; status: string | null; attempts: number | null }
const STORED_SQL = `select e.id::text as id, e.account_id::text as account, d.status, d.attempts
  from events e left join deliveries d on d.event_id = e.id`;

interface Completeness { stored: number; received: number; lost: number; duplicates: number; unexpected: number; withoutDelivery: number; lostSamples: string[] }
function completeness(stored: StoredEvent[], accounts: Set<string>, received: { count: number; arrivals: Record<string, number> }): Completeness {
  const ours = stored.filter((e) => accounts.has(e.account));
  const arrived = new Set(Object.keys(received.arrivals));
  const lost = ours.filter((e) => !arrived.has(e.id));
  const ids = new Set(ours.map((e) => e.id));
  return {
    stored: ours.length, received: arrived.size, lost: lost.length,
    duplicates: received.count - arrived.size,
    unexpected: [...arrived].filter((id) => !ids.has(id)).length,
    withoutDelivery: ours.filter((e) => e.status === null).length,
    lostSamples: lost.slice(0, 5).map((e) => `${e.id} (delivery ${e.status ?? 'none'}, ${e.attempts ?? 0} attempts)`),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Report helpers.

const ms = (x: number) => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x.toFixed(1)) : '–');
const mb = (x: number) => x.toFixed(0);
const pct = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} %`;
const met = (ok: boolean) => (ok ? 'met' : '**not met**');
const p = (xs: number[], q: number) => (xs.length ? percentile(xs, q) : NaN);
const statusList = (s: KindStats) => [...s.statuses].sort(([a], [b]) => a - b).map(([code, n]) => `${code}: ${n}`).join(', ')
  + (s.connectionErrors ? `, connection errors: ${s.connectionErrors}` : '');
function endpointTable(stats: Stats) {
  const rows = (Object.keys(KINDS) as Kind[]).filter((k) => stats.kinds.has(k)).map((k) => {
    const s = stats.of(k);
    return `| ${KINDS[k]} | ${s.latencies.length + s.connectionErrors} | ${statusList(s)} | ${s.errors} | ${ms(p(s.latencies, 0.5))} | ${ms(p(s.latencies, 0.99))} |`;
  });
  const all = stats.latencies;
  return `| endpoint | requests | statuses | errors | p50 ms | p99 ms |
|---|---:|---|---:|---:|---:|
${rows.join('\n')}
| **all** | ${stats.sent} | | **${stats.errors}** | ${ms(p(all, 0.5))} | ${ms(p(all, 0.99))} |`;
}
function memoryTable(rows: Sampled[], seconds: number) {
  return `| process | RSS start MB | RSS end MB | RSS max MB | growth | CPU over the load |
|---|---:|---:|---:|---:|---:|
${rows.map((r) => `| ${r.name} | ${mb(r.startRss)} | ${mb(r.endRss)} | ${mb(r.maxRss)} | ${pct(growth(r))} | ${((100 * (r.cpu1 - r.cpu0)) / seconds).toFixed(0)} % of a core |`).join('\n')}`;
}
/**
 * What the 429s of the mixed load were. Each account stays well within its requests a second, so the only 429 that is
 * right is a third legacy listing of an account while two of its own still stream (their answers had slowed down).
 */
function tooMany(stats: Stats) {
  const all = stats.status(429);
  if (!all) return '';
  return `429s: ${stats.rightly429} to a legacy listing while 2 other listings of the account were under way (the limit of 2 at `
    + `work: not errors); ${all - stats.rightly429} others (errors above).\n`;
}
const settingsLine = () => Object.entries(env).filter(([k]) => k.startsWith('SOAK_') && k !== 'SOAK_NO_WRITE')
  .map(([k, v]) => `${k}=${v} `).join('');
const logLine = () => watched.filter((w) => w.name !== 'receiver')
  .map((w) => `${w.name} ${w.errorLines}${w.samples.length ? ` (first: \`${w.samples[0]!.slice(0, 300).replace(/`/g, "'")}\`)` : ''}`).join(', ');
async function publish(title: string, body: string) {
  if (NO_WRITE) { console.log(`\n## ${title}\n\n${body.trim()}\n`); return; }
  await writeSection(title, body);
  console.log(`written to docs/BENCHMARKS.md: ${title}`);
}
const receiverClient = (port: number) => ({
  count: async () => (await (await fetch(`http://127.0.0.1:${port}/count`)).json()) as { count: number; distinct: number },
  stats: async () => (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as { count: number; distinct: number; arrivals: Record<string, number> },
});

// ---------------------------------------------------------------------------------------------------------------

const receiver = launch('receiver', 'bench/receiver.ts', {});
const receiverPort = await receiver.proc.listening;
const receiverBase = `http://127.0.0.1:${receiverPort}`;
const hooks = receiverClient(receiverPort);

if (!EMBEDDED) await onPostgres();
else await onEmbedded();
stopping = true;
await receiver.proc.stop();
rmSync(dataDir, { recursive: true, force: true }); // mails, and the embedded database's files (a failed run keeps them)
process.exit(0);

async function onPostgres() {
  const T = tenantsFor(RATE);
  const runStart = performance.now();
  const api = [launch('api 1', 'server/main.ts', serviceEnv('api')), launch('api 2', 'server/main.ts', serviceEnv('api'))];
  const worker = launch('worker', 'server/main.ts', serviceEnv('worker'));
  const [port1, port2, workerPort] = await Promise.all([...api, worker].map((w) => w.proc.listening));
  const targets = [targetOf('api 1', port1!), targetOf('api 2', port2!)];
  const client = processClient(port1!, ADMIN);
  const tenants: Tenant[] = [];
  for (let t = 0; t < T; t++) tenants.push(await makeTenant(client, receiverBase, `t${t + 1}`, Math.floor((t * SLOTS.length) / T)));
  const quiet = await makeTenant(client, receiverBase, 'quiet', 0);
  // The noisy tenant is a partner only: it reads its listing, which is allowed 50 times a second.
  const noisy = await integratorLoggedIn(client, dataDir, 'partner', `soak-noisy-${tag}@example.com`, 86_400);
  await client.admin('webhookConfigs.upsert', { accountId: noisy.accountId, scope: 'partner', url: `${receiverBase}/hooks/noisy`, transformer: 'partner-format', version: '1.3.0' });
  for (let j = 0; j < JOBS; j++) await client.admin('jobs.create', { brandAccountId: quiet.brand.id, partnerId: noisy.accountId, apiId: `soak-${tag}-noisy-${j}` });
  console.log(`[${since(runStart)} s] ${T} tenants of ${JOBS} jobs, a quiet and a noisy one; warm-up ${WARMUP_SECONDS} s at ${RATE}/s`);

  const stats = new Stats();
  const warmup = new Stats();
  await openLoop({ seconds: WARMUP_SECONDS, rate: RATE, tenants, targets, stats: warmup, phase: 'warm-up' });
  const procs = [...api, worker].map((w) => ({ name: w.name, pid: w.proc.child.pid! }));
  const memory = sampler([...procs, { name: 'receiver', pid: receiver.proc.child.pid! }]);
  const selfCpu = process.cpuUsage();
  const probe = new pg.Client({ connectionString: DATABASE_URL });
  await probe.connect();
  const dbCpu0 = await databaseCpu(probe);
  const load0 = loadAverage();
  const waits = new pg.Client({ connectionString: DATABASE_URL });
  await waits.connect();
  const stopWaits = databaseWaits(waits);
  memory.start();
  console.log(`[${since(runStart)} s] soak: ${SECONDS} s at ${RATE}/s over ${targets.length} api processes; RSS ${memory.rows.map((r) => `${r.name} ${mb(r.startRss)} MB`).join(', ')}`);
  const progress = setInterval(() => console.log(`[${since(runStart)} s] sent ${stats.sent}, errors ${stats.errors}, `
    + `RSS ${memory.rows.map((r) => `${r.name} ${mb(r.trend.at(-1)!)}`).join(', ')} MB`), 30_000);
  await openLoop({ seconds: SECONDS, rate: RATE, tenants, targets, stats, phase: 'soak' });
  clearInterval(progress);
  const soakSeconds = memory.end();
  const selfCpuUsed = process.cpuUsage(selfCpu);
  const load1 = loadAverage();
  const waitLine = await stopWaits();
  await waits.end();
  const dbCpuShare = cpuBetween(dbCpu0, await databaseCpu(probe)) / soakSeconds;
  await probe.end();
  console.log(`[${since(runStart)} s] soak done: ${stats.sent} requests, ${stats.errors} errors, p99 ${ms(p(stats.latencies, 0.99))} ms; `
    + memory.rows.map((r) => `${r.name} ${mb(r.startRss)} → ${mb(r.endRss)} MB (${pct(growth(r))})`).join(', '));

  // Fairness: the quiet tenant alone, then while the noisy one hammers its listing over as many connections as given;
  // from when the soak's commands and deliveries are done, so that "alone" is alone.
  const settleSeconds = await untilDrained(workerPort!, hooks.count);
  /**
   * The quiet tenant, recorded in `quietStats`, while the noisy one hammers its listing over NOISE_CONNECTIONS
   * connections, paced evenly at `rate` requests a second in all (bench/noise.ts), or as fast as the connections go
   * (rate 0: autocannon).
   */
  const withNoise = async (rate: number, quietStats: Stats, stalled = { ms: 0 }) => {
    const urls = targets.map((t) => `http://127.0.0.1:${t.port}/v3/partner-orders/paginated?page=1&pageSize=20`);
    const seconds = String(FAIRNESS_SECONDS + 3);
    const noise = spawn(process.execPath, rate > 0
      ? ['--import', 'tsx', join(root, 'bench/noise.ts'), '--rate', String(rate), '--connections', String(NOISE_CONNECTIONS), '--seconds', seconds,
        '--header', `authorization=Bearer ${noisy.token}`, ...urls]
      : [join(root, 'node_modules/autocannon/autocannon.js'), '-j', '-c', String(NOISE_CONNECTIONS), '-d', seconds,
        '-H', `authorization=Bearer ${noisy.token}`, ...urls],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(noise);
    let noiseOut = '';
    noise.stdout!.on('data', (d: Buffer) => { noiseOut += d; });
    noise.stderr!.on('data', (d: Buffer) => { noiseOut += d; });
    const noiseDone = new Promise<void>((resolve) => noise.on('exit', () => resolve()));
    await sleep(2000); // the noise is at full speed before the quiet tenant is measured
    const stall0 = diskStallMs();
    await openLoop({ seconds: FAIRNESS_SECONDS, rate: QUIET_RATE, tenants: [quiet], targets, stats: quietStats, phase: `quiet under noise (${rate || 'unpaced'})` });
    stalled.ms += diskStallMs() - stall0;
    await noiseDone;
    const noiseJson = /\{"title".*\}|\{"url".*\}/.exec(noiseOut)?.[0];
    if (!noiseJson) throw new Error(`the noise gave no result:\n${noiseOut.slice(-2000)}`);
    return JSON.parse(noiseJson) as NoiseResult;
  };
  const rounds: { alone: Stats; noise: Stats; result: NoiseResult; aloneStall: number; noiseStall: number }[] = [];
  for (let r = 1; r <= FAIRNESS_ROUNDS; r++) {
    const round = { alone: new Stats(), noise: new Stats() };
    const noiseStall = { ms: 0 };
    let aloneStall = 0;
    const alonePhase = async () => {
      const stall0 = diskStallMs();
      await openLoop({ seconds: FAIRNESS_SECONDS, rate: QUIET_RATE, tenants: [quiet], targets, stats: round.alone, phase: `quiet alone (round ${r})` });
      aloneStall = diskStallMs() - stall0;
    };
    // Alone first in odd rounds, noise first in even ones: whatever a phase leaves behind falls on both sides alike.
    let result: NoiseResult;
    if (r % 2 === 1) {
      await alonePhase();
      result = await withNoise(NOISE_RATE, round.noise, noiseStall);
    } else {
      result = await withNoise(NOISE_RATE, round.noise, noiseStall);
      await sleep(2000);
      await alonePhase();
    }
    rounds.push({ ...round, result, aloneStall, noiseStall: noiseStall.ms });
    const [a, n] = [p(round.alone.latencies, 0.99), p(round.noise.latencies, 0.99)];
    console.log(`[${since(runStart)} s] fairness round ${r}: quiet p99 ${ms(a)} ms alone, ${ms(n)} ms under noise at ${NOISE_RATE}/s (${(n / a).toFixed(2)}×); `
      + `disk waited on ${aloneStall.toFixed(0)} ms alone, ${noiseStall.ms.toFixed(0)} ms under noise`);
    await sleep(2000);
  }
  const alone = Stats.pooled(rounds.map((r) => r.alone));
  const quietAloneP99 = p(alone.latencies, 0.99);
  const judged = (quietStats: Stats, result: NoiseResult) => {
    const codes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]));
    const other = Object.entries(codes).filter(([code]) => code !== '429' && !code.startsWith('2')).reduce((a, [, n]) => a + n, 0) + result.errors;
    const quietP99 = p(quietStats.latencies, 0.99);
    console.log(`[${since(runStart)} s] fairness: quiet p99 ${ms(quietAloneP99)} ms alone, ${ms(quietP99)} ms under noise (${(quietP99 / quietAloneP99).toFixed(2)}×); `
      + `noise ${JSON.stringify(codes)}, errors ${result.errors}${result.skipped === undefined ? '' : `, skipped ${result.skipped}`}`);
    console.log(`  by endpoint, p99/max ms alone → under noise: ${[...quietStats.kinds].map(([kind, k]) => {
      const a = alone.kinds.get(kind)?.latencies ?? [];
      return `${kind} ${ms(p(a, 0.99))}/${ms(Math.max(...a))} → ${ms(p(k.latencies, 0.99))}/${ms(Math.max(...k.latencies))}`;
    }).join(', ')}`);
    return { quiet: quietStats, quietP99, ratio: quietP99 / quietAloneP99, codes, other, result };
  };
  const paced = judged(Stats.pooled(rounds.map((r) => r.noise)), addResults(rounds.map((r) => r.result)));
  const unpacedStats = new Stats();
  const unpaced = judged(unpacedStats, await withNoise(0, unpacedStats));
  const roundRatios = rounds.map((r) => p(r.noise.latencies, 0.99) / p(r.alone.latencies, 0.99));
  const ratio = median(roundRatios);
  console.log(`[${since(runStart)} s] fairness: the median round ${ratio.toFixed(2)}× (rounds ${roundRatios.map((x) => x.toFixed(2)).join(', ')}; pooled ${paced.ratio.toFixed(2)}×)`);

  // Every event of every tenant must arrive.
  const drainSeconds = await untilDrained(workerPort!, hooks.count);
  const metrics = await Promise.all([port1!, port2!, workerPort!].map(metricsOf));
  const db = new pg.Client({ connectionString: DATABASE_URL });
  await db.connect();
  const stored = (await db.query<StoredEvent>(STORED_SQL)).rows;
  const { rows: [server] } = await db.query<{ version: string }>(`select current_setting('server_version') as version`);
  await db.end();
  const accounts = new Set([...tenants, quiet].flatMap((t) => [t.brand.id, t.partner.id]).concat(noisy.accountId));
  const c = completeness(stored, accounts, await hooks.stats());
  console.log(`[${since(runStart)} s] drained in ${drainSeconds.toFixed(1)} s: ${c.stored} events stored, ${c.received} received, lost ${c.lost}, duplicates ${c.duplicates}`);
  stopping = true;
  await Promise.all([...api, worker].map((w) => w.proc.stop()));

  const errors = warmup.errors + stats.errors + alone.errors + paced.quiet.errors + unpaced.quiet.errors;
  const service5xx = metrics.reduce((a, m) => a + sumOf(m, 'http_requests_total', /status="5\d\d"/), 0);
  const deliveries = (outcome: string) => sumOf(metrics[2]!, 'webhook_deliveries_total', new RegExp(`outcome="${outcome}"`));
  const executions = (outcome: string) => sumOf(metrics[2]!, 'commands_executed_total', new RegExp(`outcome="${outcome}"`));
  const services = memory.rows.filter((r) => r.name !== 'receiver');
  const maxGrowth = Math.max(...services.map(growth));
  const wholeRun = ((performance.now() - runStart) / 1000 / 60).toFixed(1);
  const serviceCpu = services.reduce((a, r) => a + (r.cpu1 - r.cpu0), 0) / soakSeconds;
  const selfCpuShare = (selfCpuUsed.user + selfCpuUsed.system) / 1e6 / soakSeconds;
  const receiverCpu = (memory.rows[3]!.cpu1 - memory.rows[3]!.cpu0) / soakSeconds;
  const totalCpu = serviceCpu + (Number.isFinite(dbCpuShare) ? dbCpuShare : 0) + selfCpuShare + receiverCpu;
  /** A share of a core during the load, as CPU milliseconds per request served. */
  const cpuMs = (share: number) => (Number.isFinite(share) ? ((share * 1000) / (stats.sent / soakSeconds)).toFixed(1) : '(not measured)');
  const died = watched.filter((w) => w.died !== undefined);

  await publish('Soak: mixed load for minutes on PostgreSQL (2 api + 1 worker), and fairness', `
Command: \`DATABASE_URL=… ${settingsLine()}npm run bench:soak\` (${new Date().toISOString().slice(0, 10)}; PostgreSQL ${server!.version.split(' ')[0]};
the whole run took ${wholeRun} min).

Service: the real \`server/main.ts\`, two \`SERVICE_ROLE=api\` processes and one \`SERVICE_ROLE=worker\` process on one database,
\`LOG_LEVEL=info\` (every request logged), \`API_RATE_LIMIT_PER_ACCOUNT\` and \`API_CONCURRENCY_PER_ACCOUNT\` at their defaults (50/s; 4 at once per process), \`WEBHOOK_ALLOW_PRIVATE_TARGETS=1\`.
Webhooks of every tenant go to \`bench/receiver.ts\` (node:http answering 200, a process of its own). Nothing is pinned: the
three service processes, PostgreSQL, the receiver and the load generator share the 2 cores.

Load: ${T} tenants, each a brand and a partner with ${JOBS} jobs (the brand's, assigned to the partner), both with a signed
webhook configuration (version 1.3.0; \`partner-format\` for the partner). ${RATE} requests/s in an open loop (this process,
node:http with kept-alive connections: each request leaves at its scheduled time whatever the answers before it), the tenants
taking turns and each tenant's requests alternating between the two api processes, for ${WARMUP_SECONDS} s of warm-up, then
**${SECONDS} s** measured. The mix, per 100 requests of a tenant: partner paginated listing 18 (pages 1–2 of 20, every third
\`active=true\`), legacy listing streamed whole 8 (its body must parse and hold every job), single-order poll 18 (9 partner,
9 brand), SetJobAppointment 8 and SetJobYourOrderId 4 (signed with the configuration's key), brand commands 14
(RefreshOrder, UpdateOrderExternalId, UpdateCustomer in turn), command-result polls 14 (10 brand, 4 partner: the newest
answered \`_cid\` or one of the last 50; 204 while a brand command waits is expected) and the event feed 16 (8 each,
following \`next\`, limit 100). Every account stays at ${((RATE * PARTNER_SHARE) / T).toFixed(0)} requests/s at most,
well within its 50/s. ${(RATE * WRITE_SHARE).toFixed(0)} of the ${RATE} requests/s are commands, each writing 2–3 events with
their deliveries; the worker runs the brand commands and sends the webhooks meanwhile.

Why ${RATE}/s: a soak measures drift and leaks, not saturation, so the rate should leave the machine room to spare, and the
tenants split it so that no account comes near its share. CPU per request in this run (CPU time over the ${soakSeconds.toFixed(0)} s
of load, divided by the ${stats.sent} requests): the three service processes ${cpuMs(serviceCpu)} ms (the worker's
commands and deliveries included), the PostgreSQL backends of the database ${cpuMs(dbCpuShare)} ms, the load generator
${cpuMs(selfCpuShare)} ms and the receiver ${cpuMs(receiverCpu)} ms: ${cpuMs(totalCpu)} ms in all, that is ${(totalCpu * 100).toFixed(0)} % of
one core at the ${(stats.sent / soakSeconds).toFixed(0)} requests/s served, and ${((totalCpu * 1000 * RATE) / (stats.sent / soakSeconds) / 10 / 2).toFixed(0)} % of the 2 cores at ${RATE}/s.
The generator started requests ${ms(p(stats.lateness, 0.99))} ms late at p99. Active sessions of the database, on average per
sample, by wait: ${waitLine}. The machine is shared: its 1-minute load average was ${load0.toFixed(1)} when the soak began and
${load1.toFixed(1)} when it ended (2 fills both cores).${Math.max(load0, load1) > 3 ? ` **Other work loaded the machine during this run:**
CPU time per request is inflated when processes fight for the cores, and the latencies below show that load as much as
the service's.` : ''}

Latency is from a request's scheduled time to the last byte of its answer. Errors are any status other than the
expected one (200; 202 for a brand command; 200 or 204 for a command result; 429 for a legacy listing only if 2 other
listings of the account were under way at some moment between its sending and its answer), a body that does not hold, or a connection error.

${endpointTable(stats)}

${tooMany(stats)}Warm-up: ${warmup.sent} requests, ${warmup.errors} errors. Answers 5xx counted by the services themselves (\`http_requests_total\`,
whole run): ${service5xx}. Error lines in the services' logs: ${logLine()}.${died.length ? ` **Processes that died: ${died.map((w) => `${w.name} (exit ${w.died})`).join(', ')}.**` : ''}
${errorSamples.length ? `\nFirst errors:\n${errorSamples.map((e) => `- \`${e.replace(/`/g, "'")}\``).join('\n')}\n` : ''}
Webhooks: after the load (fairness phase included) the deliveries drained in ${drainSeconds.toFixed(1)} s; then the event ids
stored in \`events\` for the tenants' accounts were compared with the \`webhook-id\`s the receiver got: **${c.stored}** stored,
**${c.received}** received, **${c.lost} lost**${c.lostSamples.length ? ` (${c.lostSamples.join('; ')})` : ''}, ${c.duplicates} received more than once,
${c.unexpected} received that are not stored, ${c.withoutDelivery} stored without a delivery. The worker's attempts: ${deliveries('delivered')}
delivered, ${deliveries('retry_scheduled')} retries scheduled, ${deliveries('failed')} failed; brand commands executed
${executions('succeeded')} succeeded, ${executions('failed')} failed (the sender's fault), ${executions('gave_up')} gave up, ${executions('lost')} lost.

Memory (VmRSS from \`/proc/<pid>/status\`; start after the warm-up, end when the load stops; sampled every 5 s for the
maximum) and CPU over the ${soakSeconds.toFixed(0)} s of load:

${memoryTable(memory.rows, soakSeconds)}

Fairness: a quiet tenant (its own brand and partner, the same mix) at ${QUIET_RATE} requests/s over both api processes, from
when the soak's last commands and deliveries were done (${settleSeconds.toFixed(0)} s after its load), in ${FAIRNESS_ROUNDS} rounds of ${FAIRNESS_SECONDS} s alone and
${FAIRNESS_SECONDS} s while a noisy partner account hammers its paginated listing (a process of its own, up to ${NOISE_CONNECTIONS} connections
over both api processes, from 2 s before), paced at ${NOISE_RATE} requests/s in all (${(NOISE_RATE / 50).toFixed(0)}× its share of 50/s) spread evenly
over each second (\`bench/noise.ts\`; ${paced.result.skipped ?? 0} sends skipped because all its connections were busy). The target is
judged on the median round (alone first in odd rounds, the noise first in even ones). Rounds one by one (p99 alone →
under noise, the ratio, and how long some task of the machine waited on its disk meanwhile, by \`/proc/pressure/io\`):
${rounds.map((r, i) => `${ms(p(r.alone.latencies, 0.99))} → ${ms(p(r.noise.latencies, 0.99))} ms, ${roundRatios[i]!.toFixed(2)}× (disk waited on ${r.aloneStall.toFixed(0)} → ${r.noiseStall.toFixed(0)} ms)`).join('; ')}.
Why the median round: a commit waits for its WAL's flush, and this machine's disk now and then stalls for up to a
second or more (every write then waits, and the server's log shows COMMITs of that length); such a second falls on one
phase or the other at random, and at ${QUIET_RATE} requests/s it alone is enough to move that phase's p99 tenfold. The table
pools the rounds.
Then once for ${FAIRNESS_SECONDS} s as fast as the noisy client's connections go (autocannon), where that client itself takes most of one of
this machine's 2 cores, which no deployment shares with its clients (shown, not judged). autocannon's own pacing (\`-R\`) is
not used: it sends each connection's share of a second back to back at the start of the second, which is a burst at full
speed for part of every second, the unpaced case again.

| quiet tenant | requests | errors | p50 ms | p99 ms | × alone |
|---|---:|---:|---:|---:|---:|
| alone | ${alone.sent} | ${alone.errors} | ${ms(p(alone.latencies, 0.5))} | ${ms(quietAloneP99)} | |
| noisy tenant at ${NOISE_RATE}/s | ${paced.quiet.sent} | ${paced.quiet.errors} | ${ms(p(paced.quiet.latencies, 0.5))} | ${ms(paced.quietP99)} | ${paced.ratio.toFixed(2)} |
| noisy tenant unpaced | ${unpaced.quiet.sent} | ${unpaced.quiet.errors} | ${ms(p(unpaced.quiet.latencies, 0.5))} | ${ms(unpaced.quietP99)} | ${unpaced.ratio.toFixed(2)} |

The noisy tenant, paced: ${Object.values(paced.codes).reduce((a, n) => a + n, 0)} answers in ${paced.result.duration.toFixed(0)} s
(${Object.entries(paced.codes).map(([code, n]) => `${code}: ${n}`).join(', ')}; connection errors ${paced.result.errors}); unpaced:
${Object.values(unpaced.codes).reduce((a, n) => a + n, 0)} answers in ${unpaced.result.duration.toFixed(0)} s
(${Object.entries(unpaced.codes).map(([code, n]) => `${code}: ${n}`).join(', ')}; connection errors ${unpaced.result.errors}). Its 429s are
its share being enforced, expected and not counted as errors; ${paced.other + unpaced.other} other failures.

Targets:
- errors 0: ${errors} (warm-up, soak and the quiet tenant): ${met(errors === 0 && died.length === 0)}
- events lost 0: ${c.lost}: ${met(c.lost === 0 && c.stored > 0)}
- RSS growth < ${RSS_GROWTH_TARGET} % for every service process: ${services.map((r) => `${r.name} ${pct(growth(r))}`).join(', ')}: ${met(maxGrowth < RSS_GROWTH_TARGET)}
- quiet tenant's p99 under noise at ${NOISE_RATE}/s ≤ ${FAIRNESS_TARGET}× alone, the median of ${FAIRNESS_ROUNDS} rounds: ${ratio.toFixed(2)}× (rounds ${roundRatios.map((x) => x.toFixed(2)).join(', ')}; pooled ${ms(paced.quietP99)} / ${ms(quietAloneP99)} ms = ${paced.ratio.toFixed(2)}×): ${met(ratio <= FAIRNESS_TARGET)}
`);
}

async function onEmbedded() {
  const T = tenantsFor(EMBEDDED_RATE);
  const runStart = performance.now();
  const service = launch('all', 'server/main.ts', serviceEnv('all'));
  const port = await service.proc.listening;
  const targets = [targetOf('the process', port)];
  const client = processClient(port, ADMIN);
  const tenants: Tenant[] = [];
  for (let t = 0; t < T; t++) tenants.push(await makeTenant(client, receiverBase, `t${t + 1}`, Math.floor((t * SLOTS.length) / T)));
  console.log(`[${since(runStart)} s] ${T} tenants of ${JOBS} jobs; warm-up ${WARMUP_SECONDS} s at ${EMBEDDED_RATE}/s`);

  const warmup = new Stats();
  await openLoop({ seconds: WARMUP_SECONDS, rate: EMBEDDED_RATE, tenants, targets, stats: warmup, phase: 'warm-up' });
  const memory = sampler([{ name: 'service (`SERVICE_ROLE=all`)', pid: service.proc.child.pid! }, { name: 'receiver', pid: receiver.proc.child.pid! }]);
  const loads: number[] = [];
  memory.start();
  const stats = new Stats();
  const bursts: Stats[] = [];
  const burstCpu: number[] = [];
  const burstSeconds: number[] = [];
  for (let b = 0; b < BURSTS; b++) {
    console.log(`[${since(runStart)} s] idle ${IDLE_SECONDS} s`);
    await sleep(IDLE_SECONDS * 1000);
    console.log(`[${since(runStart)} s] burst ${b + 1}: ${BURST_SECONDS} s at ${EMBEDDED_RATE}/s; RSS ${mb(rssMb(service.proc.child.pid!))} MB`);
    const burst = new Stats();
    const cpu0 = cpuSeconds(service.proc.child.pid!);
    loads.push(loadAverage());
    const t0 = performance.now();
    await openLoop({ seconds: BURST_SECONDS, rate: EMBEDDED_RATE, tenants, targets, stats: burst, phase: `burst ${b + 1}` });
    burstCpu.push(cpuSeconds(service.proc.child.pid!) - cpu0);
    burstSeconds.push((performance.now() - t0) / 1000);
    loads.push(loadAverage());
    bursts.push(burst);
    // The burst's figures also go into the whole run's.
    for (const [kind, s] of burst.kinds) {
      const all = stats.of(kind);
      all.latencies.push(...s.latencies);
      for (const [code, n] of s.statuses) all.statuses.set(code, (all.statuses.get(code) ?? 0) + n);
      all.errors += s.errors;
      all.connectionErrors += s.connectionErrors;
    }
    stats.sent += burst.sent;
    stats.lateness.push(...burst.lateness);
    stats.rightly429 += burst.rightly429;
    console.log(`[${since(runStart)} s] burst ${b + 1} done: ${burst.sent} requests, ${burst.errors} errors, p99 ${ms(p(burst.latencies, 0.99))} ms`);
  }
  const loadSeconds = memory.end();
  const r = memory.rows[0]!;
  console.log(`[${since(runStart)} s] RSS ${mb(r.startRss)} → ${mb(r.endRss)} MB (${pct(growth(r))})`);

  const drainSeconds = await untilDrained(port, hooks.count);
  const metrics = await metricsOf(port);
  stopping = true;
  await service.proc.stop();
  // The data folder is free again: read its events here.
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(join(dataDir, 'pglite'));
  const stored = (await db.query<StoredEvent>(STORED_SQL)).rows;
  await db.close();
  const accounts = new Set(tenants.flatMap((t) => [t.brand.id, t.partner.id]));
  const c = completeness(stored, accounts, await hooks.stats());
  console.log(`[${since(runStart)} s] drained in ${drainSeconds.toFixed(1)} s: ${c.stored} events stored, ${c.received} received, lost ${c.lost}, duplicates ${c.duplicates}`);

  const errors = warmup.errors + stats.errors;
  const service5xx = sumOf(metrics, 'http_requests_total', /status="5\d\d"/);
  const deliveries = (outcome: string) => sumOf(metrics, 'webhook_deliveries_total', new RegExp(`outcome="${outcome}"`));
  const executions = (outcome: string) => sumOf(metrics, 'commands_executed_total', new RegExp(`outcome="${outcome}"`));
  const wholeRun = ((performance.now() - runStart) / 1000 / 60).toFixed(1);
  const died = watched.filter((w) => w.died !== undefined);

  await publish('Soak: bursts after idle minutes on the embedded database', `
Command: \`${DATABASE_URL ? 'DATABASE_URL=… ' : ''}${settingsLine()}npm run bench:soak\`${DATABASE_URL ? '' : ' (no \`DATABASE_URL\`)'} (${new Date().toISOString().slice(0, 10)};
the whole run took ${wholeRun} min).

Service: the real \`server/main.ts\`, one \`SERVICE_ROLE=all\` process on the embedded database (PGlite) in a data folder of
its own (\`DATA_DIR\` and \`PGLITE_DIR\` in a fresh temporary folder), \`LOG_LEVEL=info\`, \`API_RATE_LIMIT_PER_ACCOUNT\` at its
default, \`WEBHOOK_ALLOW_PRIVATE_TARGETS=1\`; webhooks to \`bench/receiver.ts\` in a process of its own.

Load: ${T} tenants of ${JOBS} jobs and the mix of the PostgreSQL soak (listings, polls, signed partner commands, brand commands,
command results, the feed) at ${EMBEDDED_RATE} requests/s in an open loop: ${WARMUP_SECONDS} s of warm-up, then ${BURSTS}
bursts of **${BURST_SECONDS} s**, each after **${IDLE_SECONDS} s idle** (no request at all; the kept-alive connections stay
open). The point: the service must keep answering correctly after a minute idle (a past defect answered 500s after 30 s
idle). Latency is from a request's scheduled time to the last byte of its answer; errors as in the PostgreSQL soak.

| burst (after ${IDLE_SECONDS} s idle) | requests | errors | statuses | first 5 answers | p50 ms | p99 ms |
|---|---:|---:|---|---|---:|---:|
${bursts.map((b, i) => {
    const codes = new Map<number, number>();
    for (const s of b.kinds.values()) for (const [code, n] of s.statuses) codes.set(code, (codes.get(code) ?? 0) + n);
    const conn = [...b.kinds.values()].reduce((a, s) => a + s.connectionErrors, 0);
    return `| ${i + 1} | ${b.sent} | ${b.errors} | ${[...codes].sort(([x], [y]) => x - y).map(([code, n]) => `${code}: ${n}`).join(', ')}${conn ? `, connection errors: ${conn}` : ''} | ${b.first.join(', ')} | ${ms(p(b.latencies, 0.5))} | ${ms(p(b.latencies, 0.99))} |`;
  }).join('\n')}

Per endpoint, all bursts:

${endpointTable(stats)}

${tooMany(stats)}Warm-up: ${warmup.sent} requests, ${warmup.errors} errors. Answers 5xx counted by the service itself (\`http_requests_total\`):
${service5xx}. Error lines in its log: ${logLine()}.${died.length ? ` **Processes that died: ${died.map((w) => `${w.name} (exit ${w.died})`).join(', ')}.**` : ''}
The generator started requests ${ms(p(stats.lateness, 0.99))} ms late at p99. During the bursts the service used
${((100 * burstCpu.reduce((a, x) => a + x, 0)) / burstSeconds.reduce((a, x) => a + x, 0)).toFixed(0)} % of one core
(${((1000 * burstCpu.reduce((a, x) => a + x, 0)) / stats.sent).toFixed(1)} ms of CPU per request, the database's included: it runs in the process). Why
${EMBEDDED_RATE}/s: everything, the database included, runs in this one process, so one core is its ceiling; at this cost per
request ${EMBEDDED_RATE}/s keeps it at about ${((100 * EMBEDDED_RATE * burstCpu.reduce((a, x) => a + x, 0)) / stats.sent).toFixed(0)} % of that core, room to spare as in the PostgreSQL soak. The machine's
1-minute load average at the start and end of each burst: ${loads.map((x) => x.toFixed(1)).join(', ')} (2 fills both cores).${Math.max(...loads) > 3
    ? ' **Other work loaded the machine during this run:** the latencies show that load as much as the service\'s.' : ''}
${errorSamples.length ? `\nFirst errors:\n${errorSamples.map((e) => `- \`${e.replace(/`/g, "'")}\``).join('\n')}\n` : ''}
Webhooks: after the last burst the deliveries drained in ${drainSeconds.toFixed(1)} s; the service was stopped and the event ids
in its \`events\` table (read with PGlite from the data folder) compared with the \`webhook-id\`s the receiver got:
**${c.stored}** stored, **${c.received}** received, **${c.lost} lost**${c.lostSamples.length ? ` (${c.lostSamples.join('; ')})` : ''}, ${c.duplicates} received more than once,
${c.unexpected} received that are not stored, ${c.withoutDelivery} stored without a delivery. Attempts: ${deliveries('delivered')} delivered,
${deliveries('retry_scheduled')} retries scheduled, ${deliveries('failed')} failed; brand commands ${executions('succeeded')} succeeded,
${executions('failed')} failed (the sender's fault), ${executions('gave_up')} gave up, ${executions('lost')} lost.

Memory (VmRSS; start after the warm-up, end after the last burst, idle gaps included; sampled every 5 s) and CPU over
those ${loadSeconds.toFixed(0)} s:

${memoryTable(memory.rows, loadSeconds)}

Targets:
- errors 0, after every idle gap: ${errors} (warm-up included): ${met(errors === 0 && died.length === 0)}
- events lost 0: ${c.lost}: ${met(c.lost === 0 && c.stored > 0)}
- RSS growth < ${RSS_GROWTH_TARGET} %: ${pct(growth(r))}: ${met(growth(r) < RSS_GROWTH_TARGET)}
`);
}
