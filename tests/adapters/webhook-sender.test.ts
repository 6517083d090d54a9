import { createHmac } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hexSignature, standardWebhookSignature } from '../../adapters/signatures.ts';
import { systemClock } from '../../adapters/system.ts';
import { UndiciWebhookSender } from '../../adapters/webhooks/sender.ts';
import type { ClaimedDelivery } from '../../domain/delivery.ts';
import { attemptDelivery } from '../../domain/use-cases/deliver-events.ts';
import { startRawReceiver } from '../support/raw-receiver.ts';
import { startReceiver } from '../support/receiver.ts';

const test = suite('the webhook sender');
const senders: UndiciWebhookSender[] = [];
const sender = (allowPrivateTargets: boolean, timeoutMs = 1000, connectionsPerOrigin = 8) => {
  const s = new UndiciWebhookSender({ timeoutMs, allowPrivateTargets, connectionsPerOrigin, clock: systemClock });
  senders.push(s);
  return s;
};
/** One connection per origin: a request goes on the connection of the one before it, however soon that is free. */
const reusing = () => sender(true, 1000, 1);
test.after(async () => {
  for (const s of senders) await s.close();
});
const webhook = (url: string, ...signatureKeys: string[]) => ({
  url,
  eventId: 'evt-1',
  body: '{"_eid":"evt-1","n":1}',
  signatureKeys,
});

test('the Standard Webhooks known-answer vector is reproduced; the hex signature is the HMAC of the raw bytes', () => {
  assert.is(
    standardWebhookSignature(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    ),
    'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  );
  assert.is(
    hexSignature('a-key-0123456789', 'héllo'),
    createHmac('sha256', Buffer.from('a-key-0123456789', 'utf8')).update(Buffer.from('héllo', 'utf8')).digest('hex'),
  );
});

test('a host name that resolves to loopback, and a loopback address, are refused at delivery time unless private targets are allowed', async () => {
  const receiver = await startReceiver();
  for (const url of [
    `http://localhost:${receiver.port}/x`,
    `http://127.0.0.1:${receiver.port}/x`,
    `http://[::ffff:127.0.0.1]:${receiver.port}/x`,
    `http://[::7f00:1]:${receiver.port}/x`,
  ]) {
    const refused = await sender(false).send(webhook(url));
    assert.is(refused.statusCode, null, url);
    assert.match(refused.error ?? '', /^refused target: .*not a public address/, url);
  }
  assert.is(receiver.received.length, 0, 'nothing reached the receiver');
  const allowed = await sender(true).send(webhook(`http://localhost:${receiver.port}/x`));
  assert.is(allowed.statusCode, 200);
  assert.is(receiver.received.length, 1);
});

test('signature headers only with a key; the exact body is sent', async () => {
  const receiver = await startReceiver();
  await sender(true).send(webhook(receiver.url(), 'plain-key-0123456789'));
  await sender(true).send(webhook(receiver.url()));
  const [signed, unsigned] = receiver.received;
  assert.is(signed!.body, '{"_eid":"evt-1","n":1}');
  assert.is(signed!.headers['x-webhook-signature'], hexSignature('plain-key-0123456789', signed!.body));
  assert.match(String(signed!.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
  assert.equal(
    [unsigned!.headers['x-webhook-signature'], unsigned!.headers['webhook-signature'], unsigned!.headers['webhook-id']],
    [undefined, undefined, 'evt-1'],
  );
});

test("with a rotated-out key in force: webhook-signature carries both, the new key's first; x-webhook-signature only the new key's", async () => {
  const receiver = await startReceiver();
  await sender(true).send(webhook(receiver.url(), 'the-new-key-0123456789', 'the-old-key-0123456789'));
  const [signed] = receiver.received;
  const timestamp = Number(signed!.headers['webhook-timestamp']);
  assert.is(
    signed!.headers['webhook-signature'],
    `${standardWebhookSignature('the-new-key-0123456789', 'evt-1', timestamp, signed!.body)} ${standardWebhookSignature('the-old-key-0123456789', 'evt-1', timestamp, signed!.body)}`,
  );
  assert.is(signed!.headers['x-webhook-signature'], hexSignature('the-new-key-0123456789', signed!.body));
});

test("what was sent and answered: the headers as the receiver got them, the answer's first 4096 bytes cut at a character; the connection still reused", async () => {
  const { createServer } = await import('node:http');
  const seen: { headers: Record<string, unknown>; socket: unknown }[] = [];
  const server = createServer((req, res) => {
    seen.push({ headers: req.headers, socket: req.socket });
    req.resume();
    req.on('end', () =>
      res
        .writeHead(seen.length === 1 ? 200 : 500, { 'content-type': 'text/plain; charset=utf-8', 'x-trace': 't-1' })
        .end(seen.length === 1 ? 'é'.repeat(5000) : `a${'é'.repeat(3000)}`),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/in`;
    const s = reusing();
    const first = await s.send(webhook(url, 'plain-key-0123456789'));
    const second = await s.send(webhook(url));
    assert.is(first.exchange!.request.url, url);
    for (const [name, value] of Object.entries(first.exchange!.request.headers))
      assert.is(seen[0]!.headers[name], value, name);
    assert.ok(
      'webhook-signature' in first.exchange!.request.headers &&
        !('webhook-signature' in second.exchange!.request.headers),
    );
    assert.equal(
      [first.statusCode, first.exchange!.response!.body, first.exchange!.response!.headers['x-trace']],
      [200, 'é'.repeat(2048), 't-1'],
    );
    assert.equal(
      [second.statusCode, second.exchange!.response!.body],
      [500, `a${'é'.repeat(2047)}`],
      'a character cut at 4096 bytes is left out',
    );
    assert.match(second.error!, /^HTTP 500: aé+$/);
    assert.is(seen[1]!.socket, seen[0]!.socket, 'a 10 KB answer read to its end: the connection is used again');
  } finally {
    server.closeAllConnections();
    server.close();
  }
  const refused = await sender(false).send(webhook('http://127.0.0.1:9/x'));
  assert.equal(
    [refused.exchange!.request.url, refused.exchange!.response],
    ['http://127.0.0.1:9/x', null],
    'a refused target: the request it would have been, no answer',
  );
});

test('a 502, a 503 or any other answer is one try and one attempt: the next waits for the schedule; 3xx is not followed', async () => {
  for (const status of [503, 502, 500, 301]) {
    const receiver = await startReceiver(() => status);
    const attempt = await sender(true).send(webhook(receiver.url()));
    assert.is(receiver.received.length, 1, `one request for a ${status}`);
    assert.equal([attempt.statusCode, attempt.error?.slice(0, 8)], [status, `HTTP ${status}`]);
  }
});

test('a reused keep-alive connection dropped before any answer: sent again at once on a new connection, one attempt', async () => {
  for (const drop of ['close', 'reset'] as const) {
    const receiver = await startRawReceiver(({ connection, onConnection }) =>
      connection === 1 && onConnection === 2 ? drop : 200,
    );
    const s = reusing();
    assert.equal((await s.send(webhook(receiver.url))).statusCode, 200);
    const attempt = await s.send(webhook(receiver.url));
    assert.equal([attempt.statusCode, attempt.error], [200, null], `${drop}: the attempt, once, with its outcome`);
    assert.equal(
      receiver.received.map((r) => [r.connection, r.onConnection, r.answered]),
      [
        [1, 1, 200],
        [1, 2, drop],
        [2, 1, 200],
      ],
      drop,
    );
  }
});

test("a re-send that is dropped too is the attempt's failure, and the last request", async () => {
  const receiver = await startRawReceiver(({ connection, onConnection }) =>
    connection === 1 && onConnection === 1 ? 200 : 'close',
  );
  const s = reusing();
  await s.send(webhook(receiver.url));
  const attempt = await s.send(webhook(receiver.url));
  assert.equal(
    receiver.received.map((r) => [r.connection, r.onConnection]),
    [
      [1, 1],
      [1, 2],
      [2, 1],
    ],
    'sent again once, on a new connection',
  );
  assert.is(attempt.statusCode, null);
  assert.match(attempt.error ?? '', /sent again on a new connection/);
});

test('a fresh connection dropped before any answer is one failed attempt, not sent again', async () => {
  for (const drop of ['reset', 'close'] as const) {
    const receiver = await startRawReceiver(() => drop);
    const attempt = await sender(true).send(webhook(receiver.url));
    assert.is(receiver.received.length, 1, `${drop}: one request`);
    assert.equal(attempt.statusCode, null);
    assert.match(attempt.error ?? '', /ECONNRESET|UND_ERR_SOCKET|closed/);
  }
});

test('a reused connection dropped after the start of an answer is one failed attempt, not sent again', async () => {
  const receiver = await startRawReceiver(({ onConnection }) => (onConnection === 2 ? 'partial' : 200));
  const s = reusing();
  await s.send(webhook(receiver.url));
  const attempt = await s.send(webhook(receiver.url));
  assert.equal(
    receiver.received.map((r) => r.answered),
    [200, 'partial'],
    'the receiver had begun to answer: not sent again',
  );
  assert.is(attempt.statusCode, null);
});

test('a 3xx answer is not delivered: the attempt records the status and an error, the delivery waits for its retry', async () => {
  const codes = [300, 301, 302, 303, 307, 308, 399];
  const redirecting = await startReceiver(({ n }) => codes[n - 1]!);
  const s = sender(true);
  const now = new Date();
  for (const code of codes) {
    const claimed: ClaimedDelivery = {
      id: `delivery-${code}`,
      eventId: 'evt-1',
      endpointId: 'endpoint-1',
      attempts: 0,
      leaseUntil: new Date(now.getTime() + 60_000),
      claimToken: 'claim-1',
      body: '{"_eid":"evt-1","n":1}',
      createdAt: now,
      endpoint: { url: redirecting.url(), signatureKey: null, previousKey: null, enabled: true, failingSince: null },
    };
    const result = await attemptDelivery({ webhookSender: s, clock: systemClock }, claimed, [60_000]);
    assert.is(result.attempt.statusCode, code, `${code}: its status recorded`);
    assert.match(result.attempt.error ?? '', new RegExp(`^HTTP ${code}`), `${code}: logged as a failure`);
    assert.is(result.state.status, 'pending', `${code}: not delivered, waits for its retry`);
  }
  assert.is(redirecting.received.length, codes.length, 'each sent once, no location followed');
});

test('a receiver slower than the timeout is a failed try with a clear error', async () => {
  const { createServer } = await import('node:http');
  const slow = createServer(() => {
    /* never answers */
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  const port = (slow.address() as { port: number }).port;
  const timedOut = await sender(true, 300).send(webhook(`http://127.0.0.1:${port}/`));
  slow.closeAllConnections();
  slow.close();
  assert.is(timedOut.statusCode, null);
  assert.match(timedOut.error ?? '', /timeout: no complete answer within 300 ms/);
  assert.ok(timedOut.durationMs >= 250 && timedOut.durationMs < 2000, String(timedOut.durationMs));
});

test.run();
