// The open loop: request i leaves at start + i / rate whatever the answers before it; latency is counted from that
// scheduled time to the last byte of the answer (a late start counts against the service, not for it).
import http from 'node:http';
import { sleep } from './config.ts';
import { ms } from './report.ts';
import { KINDS, type Kind, type Request, requestFor, SLOTS, type Tenant } from './tenants.ts';

export interface KindStats {
  latencies: number[];
  statuses: Map<number, number>;
  errors: number;
  connectionErrors: number;
}
export class Stats {
  kinds = new Map<Kind, KindStats>();
  lateness: number[] = [];
  sent = 0;
  /** The first answers, in the order they came. */
  first: string[] = [];
  /** 429s to a third legacy listing while two of the account's stream: the limit at work, not errors. */
  rightly429 = 0;
  of(kind: Kind) {
    let s = this.kinds.get(kind);
    if (!s) this.kinds.set(kind, (s = { latencies: [], statuses: new Map(), errors: 0, connectionErrors: 0 }));
    return s;
  }
  get errors() {
    return [...this.kinds.values()].reduce((a, s) => a + s.errors, 0);
  }
  get latencies() {
    return [...this.kinds.values()].flatMap((s) => s.latencies);
  }
  status(code: number) {
    return [...this.kinds.values()].reduce((a, s) => a + (s.statuses.get(code) ?? 0), 0);
  }
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
export interface NoiseResult {
  duration: number;
  errors: number;
  skipped?: number;
  statusCodeStats: Record<string, { count: number }>;
}
/** Several noise runs as one. */
export function addResults(all: NoiseResult[]): NoiseResult {
  const statusCodeStats: Record<string, { count: number }> = {};
  for (const r of all)
    for (const [code, { count }] of Object.entries(r.statusCodeStats))
      statusCodeStats[code] = { count: (statusCodeStats[code]?.count ?? 0) + count };
  const skipped = all.every((r) => r.skipped === undefined) ? undefined : all.reduce((a, r) => a + (r.skipped ?? 0), 0);
  return {
    duration: all.reduce((a, r) => a + r.duration, 0),
    errors: all.reduce((a, r) => a + r.errors, 0),
    skipped,
    statusCodeStats,
  };
}
export const errorSamples: string[] = [];

export interface Target {
  name: string;
  port: number;
  agent: http.Agent;
}
export const targetOf = (name: string, port: number): Target => ({
  name,
  port,
  agent: new http.Agent({ keepAlive: true, maxSockets: 256 }),
});

function fire(target: Target, r: Request, scheduled: number, stats: Stats, phase: string) {
  const s = stats.of(r.kind);
  const fail = (what: string) => {
    s.errors++;
    if (errorSamples.length < 12)
      errorSamples.push(`${phase}, ${KINDS[r.kind]} via ${target.name}: ${what}`.slice(0, 600));
  };
  return new Promise<void>((resolve) => {
    let settled = false;
    const settle = (then: () => void) => {
      if (!settled) {
        settled = true;
        then();
      }
      resolve();
    };
    const req = http.request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: r.path,
        method: r.method,
        agent: target.agent,
        headers: {
          authorization: `Bearer ${r.token}`,
          ...r.headers,
          ...(r.body !== undefined && {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(r.body),
          }),
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const rightly429 = status === 429 && r.allow429?.() === true;
        const expected = r.expect.includes(status) || rightly429;
        const keep = !expected || r.read !== undefined;
        const chunks: Buffer[] = [];
        if (keep) res.on('data', (d: Buffer) => chunks.push(d));
        else res.resume();
        res.on('end', () =>
          settle(() => {
            const latency = performance.now() - scheduled;
            s.latencies.push(latency);
            s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
            if (stats.first.length < 5) stats.first.push(`${status} in ${ms(latency)} ms`);
            const body = keep ? Buffer.concat(chunks).toString('utf8') : '';
            if (!expected) fail(`${status} ${body.slice(0, 400)}`);
            else if (rightly429) stats.rightly429++;
            else if (r.read) {
              let good = false;
              try {
                good = r.read(body);
              } catch {
                /* invalid JSON: a cut answer */
              }
              if (!good)
                fail(`${status} with an answer that does not hold (${body.length} bytes: …${body.slice(-120)})`);
            }
            r.done?.(status);
          }),
        );
        const cut = (what: string) =>
          settle(() => {
            s.connectionErrors++;
            fail(`${status}, answer cut: ${what}`);
            r.done?.(null);
          });
        res.on('error', (error) => cut(error.message));
        res.on('close', () => {
          if (!res.complete) cut('closed before its end');
        });
      },
    );
    req.setTimeout(60_000, () => req.destroy(new Error('no answer within 60 s')));
    req.on('error', (error) =>
      settle(() => {
        s.connectionErrors++;
        fail(`connection error ${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}`);
        if (stats.first.length < 5)
          stats.first.push(`connection error ${(error as NodeJS.ErrnoException).code ?? error.message}`);
        r.done?.(null);
      }),
    );
    req.end(r.body);
  });
}

export async function openLoop(o: {
  seconds: number;
  rate: number;
  tenants: Tenant[];
  targets: Target[];
  stats: Stats;
  phase: string;
}) {
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
