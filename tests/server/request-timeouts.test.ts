import http from 'node:http';
import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bindPort } from '../../server/http/bind-port.ts';

// A client that sends its request slowly, or stops half-way, holds a socket only until the request timeouts: the
// server answers 408 and closes. Without them Node waits 300 s for a request (its default requestTimeout).
const test = suite('request timeouts of the HTTP server');

/** Sends `head` and then nothing; answers what came back and whether the server closed the connection within `ms`. */
async function stalled(port: number, head: string, ms: number) {
  const socket = net.connect(port, '127.0.0.1');
  socket.write(head);
  let text = '';
  socket.on('data', (d: Buffer) => {
    text += d.toString();
  });
  const closed = await Promise.race([
    new Promise<boolean>((resolve) => socket.once('close', () => resolve(true))),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);
  socket.destroy();
  return { text, closed };
}

test('headers that never end, and a body that never comes, are answered 408 and closed', async () => {
  const bound = await bindPort(0, { headersMs: 300, requestMs: 600 });
  bound.serve((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  try {
    const headers = await stalled(bound.port, 'GET /healthz HTTP/1.1\r\nhost: x\r\n', 5000);
    assert.ok(headers.closed, 'closed while the headers never ended');
    assert.match(headers.text, /^HTTP\/1\.1 408/);
    const body = await stalled(bound.port, 'POST /x HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"a":', 5000);
    assert.ok(body.closed, 'closed while the body never ended');
    assert.match(body.text, /^HTTP\/1\.1 408/);
  } finally {
    await new Promise((resolve) => bound.server.close(resolve));
  }
});

/** A connection that sends nothing at all; resolves true if the server closes it within `ms`. */
async function silent(port: number, ms: number) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const closed = await Promise.race([
    new Promise<boolean>((resolve) => socket.once('close', () => resolve(true))),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);
  socket.destroy();
  return closed;
}

test('a connection that never sends a byte is closed after the keep-alive timeout, not held for ever', async () => {
  const bound = await bindPort(0);
  bound.server.keepAliveTimeout = 300; // 65 s in service; the timer reads it as each connection opens
  bound.serve((_req, res) => res.end('ok'));
  try {
    assert.ok(await silent(bound.port, 10_000), 'closed');
  } finally {
    await new Promise((resolve) => bound.server.close(resolve));
  }
});

test('closeIdle closes connections that never sent a byte and ones between requests: the server closes', async () => {
  const bound = await bindPort(0);
  bound.serve((_req, res) => res.end('ok'));
  const kept = new http.Agent({ keepAlive: true });
  await new Promise<void>((resolve, reject) =>
    http
      .get({ port: bound.port, host: '127.0.0.1', agent: kept, path: '/' }, (res) => {
        res.resume();
        res.on('end', resolve);
      })
      .on('error', reject),
  );
  const pending = silent(bound.port, 5000);
  await new Promise((resolve) => setTimeout(resolve, 200)); // connected
  const closedAt = new Promise<number>((resolve) => bound.server.close(() => resolve(Date.now())));
  const asked = Date.now();
  bound.closeIdle();
  assert.ok(await pending, 'the silent connection closed');
  assert.ok((await closedAt) - asked < 2000, 'the server closed once both were gone');
  kept.destroy();
});

test("the service's own timeouts are bounded: headers within 10 s, the whole request within 30 s", async () => {
  const { REQUEST_TIMEOUTS } = await import('../../server/http/bind-port.ts');
  const bound = await bindPort(0);
  try {
    assert.equal(
      [bound.server.headersTimeout, bound.server.requestTimeout],
      [REQUEST_TIMEOUTS.headersMs, REQUEST_TIMEOUTS.requestMs],
    );
    assert.equal([REQUEST_TIMEOUTS.headersMs, REQUEST_TIMEOUTS.requestMs], [10_000, 30_000]);
  } finally {
    await new Promise((resolve) => bound.server.close(resolve));
  }
});

test.run();
