import http from 'node:http';
import { receivers, sleep } from './support.ts';

export interface Arrival {
  id: string;
  at: number;
  payload: Record<string, unknown>;
}

/**
 * A webhook receiver that can be stopped (its port then refuses connections) and started again on the same port.
 * Records each request when it has arrived whole, then answers 200 after `delayMs`.
 */
export async function restartableReceiver(delayMs = 0, host = '127.0.0.1') {
  const arrivals: Arrival[] = [];
  let unanswered = 0;
  let current: http.Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const srv = http.createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (chunk: string) => {
          body += chunk;
        });
        req.on('end', () => {
          let payload: Record<string, unknown> = {};
          try {
            payload = JSON.parse(body);
          } catch {
            /* kept empty */
          }
          arrivals.push({ id: String(req.headers['webhook-id']), at: Date.now(), payload });
          unanswered++;
          setTimeout(() => {
            unanswered--;
            res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
          }, delayMs);
        });
      });
      srv.once('error', reject);
      srv.listen(port, host, () => {
        port = (srv.address() as { port: number }).port;
        current = srv;
        resolve();
      });
    });
  await listen();
  const receiver = {
    get port() {
      return port;
    },
    url: (path = '/hooks') => `http://${host}:${port}${path}`,
    arrivals,
    /** Requests received and not answered yet: sends under way. */
    unanswered: () => unanswered,
    ids: () => new Set(arrivals.map((a) => a.id)),
    start: listen,
    /** Closes the listener and every connection: from now on the port refuses connections. */
    stop: () =>
      new Promise<void>((resolve) => {
        const srv = current;
        current = null;
        if (!srv) return resolve();
        srv.closeAllConnections();
        srv.close(() => resolve());
      }),
    /** Resolves once every id has arrived at least once, or fails after `timeoutMs`. */
    async untilAll(ids: readonly string[], timeoutMs: number, what: string) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const got = receiver.ids();
        const missing = ids.filter((id) => !got.has(id));
        if (missing.length === 0) return Date.now();
        if (Date.now() > deadline)
          throw new Error(`${what}: ${missing.length} of ${ids.length} events did not arrive within ${timeoutMs} ms`);
        await sleep(50);
      }
    },
  };
  receivers.push(receiver.stop);
  return receiver;
}
