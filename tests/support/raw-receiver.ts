import type { AddressInfo } from 'node:net';
import { createServer, type Socket } from 'node:net';
import { closeAtEnd } from './shared.ts';

/**
 * What the raw receiver does with a request: answer it (a status, the connection kept alive), drop the connection
 * without a byte of an answer (`close`: FIN; `reset`: RST), or send the start of an answer and then drop it.
 */
export type RawAnswer = number | 'close' | 'reset' | 'partial';

export interface RawRequest {
  /** Which connection it came on (1 for the first the receiver accepted). */
  connection: number;
  /** Its place on that connection (1 for the first request). */
  onConnection: number;
  answered: RawAnswer;
}

/**
 * An HTTP/1.1 receiver on a plain TCP server, loopback, port 0, for what `node:http` will not do on demand: keep a
 * connection alive after an answer, then drop it when the next request arrives, as a receiver closing an idle
 * keep-alive connection at that very moment does. Closed after the last suite.
 */
export async function startRawReceiver(answer: (request: Omit<RawRequest, 'answered'>) => RawAnswer) {
  const received: RawRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    const connection = ++connections;
    let onConnection = 0;
    let buffer = Buffer.alloc(0);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(
          /\r\ncontent-length:\s*(\d+)/i.exec(buffer.subarray(0, end).toString('latin1'))?.[1] ?? 0,
        );
        if (buffer.length < end + 4 + length) return;
        buffer = buffer.subarray(end + 4 + length);
        const request = { connection, onConnection: ++onConnection };
        const answered = answer(request);
        received.push({ ...request, answered });
        if (answered === 'close') return void socket.destroy();
        if (answered === 'reset') return void socket.resetAndDestroy();
        if (answered === 'partial') return void socket.end('HTTP/1.1 200 OK\r\ncontent-le');
        socket.write(
          `HTTP/1.1 ${answered} Whatever\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok`,
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  closeAtEnd(close);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received, close };
}
