import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { brandWithEndpoint } from '../support/delivery-events.ts';
import { appWithMailbox } from '../support/integrators.ts';
import { startRawReceiver } from '../support/raw-receiver.ts';
import { startReceiver } from '../support/receiver.ts';

// The durable retries wait on the service's clock: the test clock moves an hour-long wait forward at once.
const test = suite('webhook retries on the test clock');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
interface Logged {
  status: string;
  attempts: { statusCode: number | null; error: string | null }[];
  nextAttemptAt: string | null;
}

/** The account's deliveries, oldest first, once `check` holds for them (the pump records an attempt after it ends). */
async function deliveriesOnce(app: App, accountId: string, check: (log: Logged[]) => boolean, what: string) {
  for (const deadline = Date.now() + 10_000; ; ) {
    const log = (await app.admin.query<{ items: Logged[] }>('deliveries.list', { accountId })).items.reverse();
    if (check(log)) return log;
    if (Date.now() > deadline) throw new Error(`${what}: not within 10 s; the log: ${JSON.stringify(log)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('a retry an hour away goes out once the test clock has moved an hour, not before', async () => {
  const app = await appWithMailbox({ TEST_CLOCK: '1', WEBHOOK_RETRY_SCHEDULE: '1h', WEBHOOK_TIMEOUT_MS: '2000' });
  app.worker.start();
  try {
    const receiver = await startReceiver(({ n }) => (n === 1 ? 500 : 200));
    const brandId = await brandWithEndpoint(app, receiver.url());
    await app.admin.call('jobs.create', { brandAccountId: brandId, status: 'accepted' });
    await receiver.until((r) => r.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const [delivery] = (
      await app.admin.query<{ items: { status: string; attempts: unknown[]; nextAttemptAt: string }[] }>(
        'deliveries.list',
        { accountId: brandId },
      )
    ).items;
    assert.equal(
      [delivery!.status, receiver.received.filter((r) => r.answered === 200).length],
      ['pending', 0],
      'the retry waits for its hour',
    );
    assert.ok(delivery!.attempts.length >= 1);

    await app.admin.call('testClock.advance', { seconds: 3600 });
    const answered = await receiver.until((r) => r.some((x) => x.answered === 200), 5000, 'the retry after the hour');
    assert.ok(answered.some((x) => x.answered === 200));
  } finally {
    await app.worker.stop();
  }
});

test('a receiver answering 503 gets one request per scheduled attempt: 4 attempts with 3 delays, each listed, then failed', async () => {
  const app = await appWithMailbox({ TEST_CLOCK: '1', WEBHOOK_RETRY_SCHEDULE: '1h,1h,1h', WEBHOOK_TIMEOUT_MS: '2000' });
  app.worker.start();
  try {
    const receiver = await startReceiver(() => 503);
    const brandId = await brandWithEndpoint(app, receiver.url());
    await app.admin.call('jobs.create', { brandAccountId: brandId, status: 'accepted' });
    for (let n = 1; n <= 4; n++) {
      const [delivery] = await deliveriesOnce(app, brandId, ([d]) => (d?.attempts.length ?? 0) >= n, `attempt ${n}`);
      assert.is(receiver.received.length, n, `attempt ${n}: one request each`);
      assert.equal(
        delivery!.attempts.map((a) => a.statusCode),
        Array(n).fill(503),
        `attempt ${n}: each listed`,
      );
      assert.is(delivery!.status, n < 4 ? 'pending' : 'failed');
      if (n < 4) await app.admin.call('testClock.advance', { seconds: 3600 });
    }
  } finally {
    await app.worker.stop();
  }
});

test('a delivery whose reused keep-alive connection was dropped before any answer goes again at once: one attempt, delivered', async () => {
  // One connection per receiver, so that the second delivery goes on the first one's connection.
  const app = await appWithMailbox({
    TEST_CLOCK: '1',
    WEBHOOK_RETRY_SCHEDULE: '1h',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_MAX_IN_FLIGHT: '1',
  });
  app.worker.start();
  try {
    const receiver = await startRawReceiver(({ onConnection }) => (onConnection === 2 ? 'close' : 200));
    const brandId = await brandWithEndpoint(app, receiver.url);
    await app.admin.call('jobs.create', { brandAccountId: brandId, status: 'accepted' });
    await deliveriesOnce(
      app,
      brandId,
      (log) => log.length === 1 && log[0]!.status === 'delivered',
      'the first delivery',
    );
    await app.admin.call('jobs.create', { brandAccountId: brandId, status: 'accepted' });
    const log = await deliveriesOnce(
      app,
      brandId,
      (l) => l.length === 2 && l[1]!.status !== 'pending',
      'the second delivery',
    );
    assert.equal(
      receiver.received.map((r) => [r.connection, r.onConnection, r.answered]),
      [
        [1, 1, 200],
        [1, 2, 'close'],
        [2, 1, 200],
      ],
    );
    assert.equal(log[1]!.status, 'delivered');
    assert.equal(
      log[1]!.attempts.map((a) => [a.statusCode, a.error]),
      [[200, null]],
      'one attempt, its outcome',
    );
  } finally {
    await app.worker.stop();
  }
});

test('a receiver answering with U+0000 and a broken surrogate is recorded like any other, and holds no other tenant up', async () => {
  const app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '1h', WEBHOOK_TIMEOUT_MS: '2000' });
  app.worker.start();
  const { createServer } = await import('node:http');
  const odd = createServer((req, res) => {
    req.resume();
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(Buffer.from('oops\u0000nul \xed\xa0\x80 end', 'latin1'));
  });
  await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
  try {
    const fine = await startReceiver(() => 200);
    const oddBrand = await brandWithEndpoint(app, `http://127.0.0.1:${(odd.address() as { port: number }).port}/hooks`);
    const fineBrand = await brandWithEndpoint(app, fine.url());
    await app.admin.call('jobs.create', { brandAccountId: oddBrand, status: 'accepted' });
    await app.admin.call('jobs.create', { brandAccountId: fineBrand, status: 'accepted' });
    // Before: the record of the batch failed on the NUL (22021), both stayed pending and were sent again after every
    // lease.
    const [refused] = await deliveriesOnce(
      app,
      oddBrand,
      (log) => log[0]?.attempts.length === 1,
      'the odd answer recorded',
    );
    assert.equal([refused!.status, refused!.attempts[0]!.statusCode], ['pending', 500]);
    assert.match(refused!.attempts[0]!.error ?? '', /^HTTP 500: oops\ufffdnul/);
    assert.not.ok((refused!.attempts[0]!.error ?? '').includes('\u0000'));
    const [delivered] = await deliveriesOnce(
      app,
      fineBrand,
      (log) => log[0]?.status === 'delivered',
      "the other tenant's delivery recorded",
    );
    assert.equal(delivered!.attempts.length, 1);
  } finally {
    odd.close();
    await app.worker.stop();
  }
});

test.run();
