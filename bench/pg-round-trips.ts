// A TCP proxy in front of PostgreSQL that counts the round trips its clients make, for bench/cpu-per-request. It reads
// the frontend protocol: after the startup message every message is a type byte and a length. A client waits for the
// server once per simple Query ('Q') and once per Sync ('S', which ends each statement of the extended protocol that
// node-postgres speaks: Parse/Bind/Describe/Execute/Sync in one write). Counting on the wire needs no server setting,
// no superuser and no log file, and sees every statement of every connection, LISTEN and NOTIFY included.
import net from 'node:net';

export interface RoundTripProxy {
  /** A connection string like `target`'s that goes through the proxy. */
  url: string;
  /** Round trips so far: simple queries plus syncs, and each kind apart. */
  count(): { roundTrips: number; queries: number; syncs: number };
  /**
   * The statements of the round trips after the first `from` of them, in order (the start of each statement's text).
   */
  statements(from: number): string[];
  close(): Promise<void>;
}

export async function roundTripProxy(target: string): Promise<RoundTripProxy> {
  const to = new URL(target);
  let queries = 0;
  let syncs = 0;
  const texts: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(to.port || 5432), to.hostname);
    sockets.add(client).add(upstream);
    let pending: Buffer = Buffer.alloc(0);
    let started = false;
    let parsed: string | undefined;
    let bound: string | undefined;
    const prepared = new Map<string, string>();
    client.on('data', (chunk: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      for (;;) {
        // The startup message (and an SSL or cancel request) has no type byte: its length comes first.
        const head = started ? 5 : 4;
        if (pending.length < head) break;
        const length = started ? pending.readInt32BE(1) + 1 : pending.readInt32BE(0);
        if (pending.length < length) break;
        if (!started) {
          const code = pending.readInt32BE(4);
          started = code !== 80877103; // an SSL request is answered before the real startup message
        } else if (pending[0] === 0x51) {
          queries++;
          texts.push(textAt(pending, 5));
        } else if (pending[0] === 0x50) {
          const name = cString(pending, 5);
          parsed = textAt(pending, 5 + Buffer.byteLength(name) + 1);
          if (name) prepared.set(name, parsed);
        } else if (pending[0] === 0x42) {
          const portal = cString(pending, 5);
          bound = prepared.get(cString(pending, 5 + Buffer.byteLength(portal) + 1));
        } else if (pending[0] === 0x53) {
          syncs++;
          texts.push(bound ?? parsed ?? '?');
          parsed = bound = undefined;
        }
        pending = pending.subarray(length);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const via = new URL(target);
  via.hostname = '127.0.0.1';
  via.port = String((server.address() as net.AddressInfo).port);
  return {
    url: via.toString(),
    count: () => ({ roundTrips: queries + syncs, queries, syncs }),
    statements: (from) => texts.slice(from),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const cString = (message: Buffer, offset: number) => message.toString('utf8', offset, message.indexOf(0, offset));
/** The start of the statement text at `offset`, on one line, its string literals (values the ORM inlined) left out. */
function textAt(message: Buffer, offset: number) {
  return cString(message, offset)
    .slice(0, 300)
    .replace(/'[^']*'?/g, "'…'")
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 70);
}
