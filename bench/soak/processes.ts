// The soak's processes: every one started here is killed when this process ends, however it ends. What is read from
// them: their logs' error lines, memory and CPU, their metrics, and the database's backends.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { type ServiceProcess, startScript } from '../../tests/support/process.ts';
import { cpuSeconds } from '../report.ts';
import { ADMIN, DATABASE_URL, DRAIN_TIMEOUT_SECONDS, dataDir, EMBEDDED, sleep } from './config.ts';

const started: { proc: ServiceProcess; name: string }[] = [];
export const children: ChildProcess[] = [];
/** Set once the run stops its processes itself: an exit after that is no death. */
export const run = { stopping: false };
process.on('exit', () => {
  for (const { proc } of started) proc.child.kill('SIGKILL');
  for (const child of children) child.kill('SIGKILL');
});
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));

export interface Watched {
  name: string;
  proc: ServiceProcess;
  errorLines: number;
  samples: string[];
  died: number | null | undefined;
}
export const watched: Watched[] = [];
// BENCH_NODE_ARGS: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, for the service processes (not the receiver).
const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];

/** Starts a script and counts the error and fatal lines of its log (pino levels 50 and 60) as they come. */
export function launch(name: string, script: string, settings: Record<string, string>): Watched {
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
  void proc.exited.then((code) => {
    if (!run.stopping) {
      w.died = code;
      console.error(`${name} exited with ${code} during the run`);
    }
  });
  watched.push(w);
  return w;
}

export const serviceEnv = (role: 'api' | 'worker' | 'all'): Record<string, string> => ({
  ...(EMBEDDED ? { PGLITE_DIR: join(dataDir, 'pglite') } : { DATABASE_URL: DATABASE_URL! }),
  DATA_DIR: dataDir,
  NODE_ENV: 'production',
  JWT_SECRET: 'bench-secret-0123456789-0123456789-0123',
  ADMIN_TOKEN: ADMIN,
  SERVICE_ROLE: role,
  WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
  LOGIN_LIMIT_PER_EMAIL: '1000',
  LOGIN_LIMIT_PER_ADDRESS: '1000',
  // API_RATE_LIMIT_PER_ACCOUNT (50/s) and API_CONCURRENCY_PER_ACCOUNT (4) are left at their defaults: the fairness
  // phase measures them.
  LOG_LEVEL: 'info',
});

/** Resident memory (MB) and CPU time used so far (s) of a process, from /proc. */
export function rssMb(pid: number) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}
export { cpuSeconds };

/** Whether the PostgreSQL server runs on this machine: only then are its backends' process ids ours to read. */
const LOCAL_DATABASE =
  !!DATABASE_URL && ['127.0.0.1', 'localhost', '[::1]', ''].includes(new URL(DATABASE_URL).hostname);
/**
 * CPU seconds used so far by the PostgreSQL backends serving this database (none known when the server is elsewhere).
 */
export async function databaseCpu(db: pg.Client) {
  if (!LOCAL_DATABASE) return new Map<number, number>();
  const { rows } = await db.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
  );
  return new Map(
    rows.map(({ pid }) => [pid, cpuSeconds(pid)]).filter(([, cpu]) => Number.isFinite(cpu)) as [number, number][],
  );
}
/** CPU used between two readings: the backends of both, plus all of any that came in between (NaN: not measured). */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>) {
  if (!after.size) return NaN;
  let total = 0;
  for (const [pid, cpu] of after) total += cpu - (before.get(pid) ?? 0);
  return total;
}

/**
 * What the database's sessions are doing, sampled every 2 s until stopped: how often an active session was seen in each
 * wait (type/event; "CPU/running" when none), to tell a queue on locks or I/O from a queue on the CPU.
 */
export function databaseWaits(db: pg.Client) {
  const seen = new Map<string, number>();
  let samples = 0;
  let on = true;
  const loop = (async () => {
    while (on) {
      const { rows } = await db.query<{
        wait: string;
        n: number;
      }>(`select coalesce(wait_event_type, 'CPU') || '/' || coalesce(wait_event, 'running') as wait,
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
export async function metricsOf(port: number) {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const values: Record<string, number> = {};
  for (const line of (await res.text()).split('\n')) {
    const match = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match) values[match[1]!] = Number(match[2]);
  }
  return values;
}
export const sumOf = (values: Record<string, number>, name: string, labels: RegExp = /.*/) =>
  Object.entries(values)
    .filter(([k]) => k.startsWith(`${name}{`) && labels.test(k))
    .reduce((a, [, v]) => a + v, 0);

// Memory and CPU of the processes under test, sampled every 5 s.

export interface Sampled {
  name: string;
  pid: number;
  startRss: number;
  endRss: number;
  maxRss: number;
  cpu0: number;
  cpu1: number;
  trend: number[];
}
export function sampler(procs: { name: string; pid: number }[]) {
  const rows: Sampled[] = procs.map(({ name, pid }) => ({
    name,
    pid,
    startRss: NaN,
    endRss: NaN,
    maxRss: 0,
    cpu0: NaN,
    cpu1: NaN,
    trend: [],
  }));
  let timer: NodeJS.Timeout | undefined;
  let t0 = 0;
  const sample = () => {
    for (const r of rows) {
      const rss = rssMb(r.pid);
      r.maxRss = Math.max(r.maxRss, rss);
      r.trend.push(rss);
    }
  };
  return {
    rows,
    start() {
      t0 = performance.now();
      for (const r of rows) {
        r.startRss = rssMb(r.pid);
        r.maxRss = r.startRss;
        r.cpu0 = cpuSeconds(r.pid);
        r.trend = [r.startRss];
      }
      timer = setInterval(sample, 5000);
    },
    end() {
      clearInterval(timer);
      for (const r of rows) {
        r.endRss = rssMb(r.pid);
        r.maxRss = Math.max(r.maxRss, r.endRss);
        r.cpu1 = cpuSeconds(r.pid);
        r.trend.push(r.endRss);
      }
      return (performance.now() - t0) / 1000;
    },
  };
}
export const growth = (r: Sampled) => ((r.endRss - r.startRss) / r.startRss) * 100;

// After the load: every event stored for the tenants must have reached the receiver.

export async function untilDrained(port: number, receiver: () => Promise<{ distinct: number }>) {
  const t0 = performance.now();
  let quiet = 0;
  let last = -1;
  for (;;) {
    const m = await metricsOf(port);
    const pending =
      (m.webhook_deliveries_pending ?? NaN) +
      (m['commands{state="accepted"}'] ?? 0) +
      (m['commands{state="running"}'] ?? 0);
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

export const receiverClient = (port: number) => ({
  count: async () =>
    (await (await fetch(`http://127.0.0.1:${port}/count`)).json()) as { count: number; distinct: number },
  stats: async () =>
    (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as {
      count: number;
      distinct: number;
      arrivals: Record<string, number>;
    },
});

/** The webhook receiver's process, its base URL, and what it has received. */
export interface ReceiverSide {
  receiver: Watched;
  base: string;
  hooks: ReturnType<typeof receiverClient>;
}
