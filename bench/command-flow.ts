// POST-to-result for bench/commands as the service's own record has it: a steady stream of commands in an open loop,
// each result's time read afterwards from commands.finished_at.
import http from 'node:http';
import pg from 'pg';
import type { ServiceProcess } from '../tests/support/process.ts';
import { percentile } from './report.ts';

/**
 * What the flow needs of the bench: how it starts the service, what it sends and as whom, and how it settles a part.
 */
export function steadyFlow({
  start,
  command,
  token,
  DATABASE_URL,
  brandId,
  settle,
}: {
  start: (role: 'api' | 'all' | 'worker', cpu?: number) => ServiceProcess;
  command: () => string;
  token: string;
  DATABASE_URL: string;
  brandId: string;
  settle: (client: pg.Client) => Promise<void>;
}) {
  /**
   * A steady stream of commands to the whole service, in an open loop: either as deployed on PostgreSQL, an `api`
   * process (pinned to CPU 0) and a `worker` process (placed by the system), or everything in one process on one core
   * (`SERVICE_ROLE=all`, pinned to CPU 0). When each result became available is read afterwards from the service's own
   * record (commands.finished_at, on the same machine's clock), so that observing it adds no load: polling every
   * command every few milliseconds would.
   */
  async function steady(seconds: number, rate: number, topology: 'api + worker' | 'one process') {
    const procs = topology === 'one process' ? [start('all')] : [start('api'), start('worker', undefined)];
    try {
      const [port] = await Promise.all(procs.map((p) => p.listening));
      await flowOnce(port!, 3, rate); // warm-up, in the same processes: what is measured next runs compiled code
      return await flowOnce(port!, seconds, rate);
    } finally {
      await Promise.all(procs.map((p) => p.stop()));
    }
  }

  async function flowOnce(port: number, seconds: number, rate: number) {
    // An open loop on node:http with kept-alive connections: each POST leaves at its time, whatever the answers
    // before it (autocannon's rate paces per connection, in bursts), and fetch would cost the load generator CPU
    // that two cores cannot spare.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
    const sentAt = new Map<string, number>();
    const postMs: number[] = [];
    let failures = 0;
    const one = () =>
      new Promise<void>((resolve) => {
        const body = command();
        const started = performance.now();
        sentAt.set((JSON.parse(body) as { _cid: string })._cid, Date.now());
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            path: '/v3/commands',
            method: 'POST',
            agent,
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              authorization: `Bearer ${token}`,
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => {
              postMs.push(performance.now() - started);
              if (res.statusCode !== 202) failures++;
              resolve();
            });
          },
        );
        req.on('error', () => {
          failures++;
          resolve();
        });
        req.end(body);
      });
    const inFlight: Promise<void>[] = [];
    const begun = performance.now();
    for (let i = 0; performance.now() - begun < seconds * 1000; i++) {
      const wait = begun + (i * 1000) / rate - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      inFlight.push(one());
    }
    await Promise.all(inFlight);
    agent.destroy();
    const result = { failures, post: { p50: percentile(postMs, 0.5), p99: percentile(postMs, 0.99) } };
    const db = new pg.Client({ connectionString: DATABASE_URL });
    await db.connect();
    try {
      let finished: { cid: string; at: Date }[] = [];
      for (let waited = 0; waited < 30_000; waited += 100) {
        finished = (
          await db.query<{ cid: string; at: Date }>(
            'select cid, finished_at as at from commands where account_id = $1 and cid = any($2) and finished_at is not null',
            [brandId, [...sentAt.keys()]],
          )
        ).rows;
        if (finished.length === sentAt.size) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await settle(db);
      return {
        latencies: finished.map((f) => f.at.getTime() - sentAt.get(f.cid)!),
        failures: result.failures,
        sent: sentAt.size,
        post: result.post,
      };
    } finally {
      await db.end();
    }
  }
  return steady;
}

export type SteadyFlow = Awaited<ReturnType<ReturnType<typeof steadyFlow>>>;
