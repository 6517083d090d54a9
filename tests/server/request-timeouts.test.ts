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
