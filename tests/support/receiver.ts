import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeAtEnd } from './shared.ts';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  payload: Record<string, unknown>;
  at: number;
  /** The answer given: a status, or null when the connection was dropped without one. */
  answered: number | null;
}

/**
 * A webhook receiver on loopback, port 0: records every request and answers what `respond` says for it (a status
 * code, or 'drop' to close the connection). Closed after the last suite.
 */
export async function startReceiver(
  respond: (request: { payload: Record<string, unknown>; n: number }) => number | 'drop' = () => 200,
) {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((req, res) => {
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
        /* recorded as is */
      }
      const answer = respond({ payload, n: received.length + 1 });
      received.push({
        headers: req.headers,
        body,
        payload,
        at: Date.now(),
        answered: answer === 'drop' ? null : answer,
      });
      for (const wake of waiters.splice(0)) wake();
      if (answer === 'drop') {
        req.socket.destroy();
        return;
      }
      res
        .writeHead(answer, { 'content-type': 'text/plain' })
        .end(answer < 300 ? 'ok' : `failure ${answer} `.repeat(50));
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  closeAtEnd(close);
  const { port } = server.address() as AddressInfo;
  return {
    url: (path = '/hooks') => `http://127.0.0.1:${port}${path}`,
    port,
    received,
    close,
    /** Resolves once `check` holds for what was received, or fails after `timeoutMs`. */
    async until(check: (received: Received[]) => boolean, timeoutMs = 10_000, what = 'the expected deliveries') {
      const deadline = Date.now() + timeoutMs;
      while (!check(received)) {
        if (Date.now() > deadline) {
          const last = received
            .slice(-10)
            .map((r) => `${r.payload._type}/${r.answered}`)
            .join(', ');
          throw new Error(
            `${what} did not arrive within ${timeoutMs} ms; received ${received.length}, the last: ${last}`,
          );
        }
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return received;
    },
  };
}
