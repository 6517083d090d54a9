// POST-to-result as a brand's client sees it, for bench/commands: each command POSTed in an open loop, then its result
// polled (GET /v3/commands/{cid}) every POLL_MS until it is there. The polls are load on the same process as the
// commands, which is the point: a client that polls is part of what the service must keep up with.
import http from 'node:http';
import { percentile } from './report.ts';

export const POLL_MS = 20;

export interface PolledFlow {
  sent: number;
  finished: number;
  polls: number;
  p50: number;
  p99: number;
  /**
   * POSTs not answered 202, polls answered neither 200 nor 204 (or not at all), and results still missing after
   * `giveUpMs`.
   */
  failures: { post: number; poll: number; gaveUp: number };
  /** The statuses of those failed POSTs and polls (0: no answer). */
  unexpected: Record<number, number>;
}

/**
 * `rate` commands a second for `seconds` (`command()` gives each body, a new `_cid`), each polled from its 202 on until
 * its result answers 200, at most `giveUpMs` after its POST. Latency: from just before the POST to the 200's last byte;
 * Infinity for a command whose result did not come.
 */
export async function polledFlow(o: {
  port: number;
  token: string;
  seconds: number;
  rate: number;
  command: () => string;
  giveUpMs?: number;
}): Promise<PolledFlow> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  const giveUpMs = o.giveUpMs ?? 60_000;
  const latencies: number[] = [];
  const failures = { post: 0, poll: 0, gaveUp: 0 };
  const unexpected: Record<number, number> = {};
  const odd = (status: number) => {
    unexpected[status] = (unexpected[status] ?? 0) + 1;
  };
  let polls = 0;
  const exchange = (method: 'GET' | 'POST', path: string, body?: string) =>
    new Promise<number>((resolve) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: o.port,
          path,
          method,
          agent,
          headers: {
            authorization: `Bearer ${o.token}`,
            ...(body !== undefined && {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            }),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(body);
    });
  const one = async () => {
    const body = o.command();
    const cid = (JSON.parse(body) as { _cid: string })._cid;
    const started = performance.now();
    const accepted = await exchange('POST', '/v3/commands', body);
    if (accepted !== 202) {
      failures.post++;
      odd(accepted);
      return;
    }
    for (let k = 1; ; k++) {
      const wait = started + k * POLL_MS - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      polls++;
      const status = await exchange('GET', `/v3/commands/${encodeURIComponent(cid)}`);
      if (status === 200) {
        latencies.push(performance.now() - started);
        return;
      }
      if (status !== 204) {
        failures.poll++;
        odd(status);
        return;
      }
      if (performance.now() - started > giveUpMs) {
        failures.gaveUp++;
        return;
      }
    }
  };
  const inFlight: Promise<void>[] = [];
  const begun = performance.now();
  for (let i = 0; performance.now() - begun < o.seconds * 1000; i++) {
    const wait = begun + (i * 1000) / o.rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(one());
  }
  await Promise.all(inFlight);
  agent.destroy();
  // A command whose result never came is later than any that came: percentiles over all, so that losing results cannot
  // improve them.
  const all = [...latencies, ...Array.from({ length: inFlight.length - latencies.length }, () => Infinity)];
  return {
    sent: inFlight.length,
    finished: latencies.length,
    failures,
    unexpected,
    polls,
    p50: percentile(all, 0.5),
    p99: percentile(all, 0.99),
  };
}
