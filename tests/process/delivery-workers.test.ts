import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testApp } from '../support/app.ts';
import { receivedAll, writeEvents } from '../support/delivery-events.ts';
import { type ServiceProcess, startService } from '../support/process.ts';
import { startReceiver } from '../support/receiver.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// Delivery workers in processes of their own, sharing the PostgreSQL server of the suite (CI's second pass).
const test = suite('delivery workers in separate processes');
const server = process.env.DATABASE_URL;
type App = Awaited<ReturnType<typeof testApp>>;
let app: App;
const workers: ServiceProcess[] = [];
/**
 * A short timeout makes short leases (the SIGKILL test); a receiver in this busy process may then be too slow (a
 * retry).
 */
const worker = (timeoutMs = 5000) => {
  const started = startService({
    DATABASE_URL: server!,
    SERVICE_ROLE: 'worker',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    WEBHOOK_TIMEOUT_MS: String(timeoutMs),
    LOG_LEVEL: 'info',
  });
  workers.push(started);
  return started;
};
test.after(async () => {
  for (const w of workers) await w.stop('SIGKILL');
});
const errorsOf = (w: ServiceProcess) =>
  w
    .output()
    .split('\n')
    .filter((l) => /"level":(50|60)/.test(l))
    .slice(0, 3)
    .join('\n');

test.before(async () => {
  if (onPostgres) app = await testApp();
});

test('two workers and 2,000 events: every webhook-id received once, the events of each order in order', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const receiver = await startReceiver();
  const [a, b] = [worker(), worker()];
  await Promise.all([a.listening, b.listening]);
  const events = await writeEvents(app, receiver.url(), 200, 10);
  await receiver
    .until((r) => new Set(r.map((x) => x.headers['webhook-id'])).size >= 2000, 60_000, '2,000 deliveries')
    .catch((error: Error) => {
      throw new Error(`${error.message}\n${errorsOf(a)}\n${errorsOf(b)}`);
    });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const counts = new Map<string, number>();
  for (const r of receiver.received)
    counts.set(String(r.headers['webhook-id']), (counts.get(String(r.headers['webhook-id'])) ?? 0) + 1);
  assert.ok(
    events.every((e) => counts.get(e.id) === 1),
    `sent twice or never: ${events.filter((e) => counts.get(e.id) !== 1).length}`,
  );
  const received = receiver.received.map((r) => r.payload);
  for (const orderId of new Set(events.map((e) => e.orderId))) {
    assert.equal(
      received.filter((p) => p.orderId === orderId).map((p) => p.n),
      [...Array(10).keys()],
      `order ${orderId}`,
    );
  }
  await Promise.all([a.stop(), b.stop()]);
});

test('events committed one at a time while two workers claim: each arrives within seconds, none held back by a claim', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  // A claim that locked a delivery committed after its own snapshot, and then lost it, would hold it for a lease (42
  // s).
  const receiver = await startReceiver();
  const [a, b] = [worker(), worker()];
  await Promise.all([a.listening, b.listening]);
  const ids = (await Promise.all(Array.from({ length: 8 }, () => writeEvents(app, receiver.url(), 1, 75)))).flat();
  await receiver
    .until(
      (r) => {
        const got = new Set(r.map((x) => String(x.headers['webhook-id'])));
        return ids.every((e) => got.has(e.id));
      },
      10_000,
      'every event',
    )
    .catch((error: Error) => {
      throw new Error(`${error.message}\n${errorsOf(a)}\n${errorsOf(b)}`);
    });
  await Promise.all([a.stop(), b.stop()]);
});

test('a worker killed with SIGKILL during a burst of 1,000: after a restart every event arrives at least once', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const receiver = await startReceiver();
  const doomed = worker(500);
  await doomed.listening;
  const events = await writeEvents(app, receiver.url(), 1000, 1);
  await receiver.until((r) => r.length >= 50, 30_000, 'the first deliveries');
  doomed.child.kill('SIGKILL');
  await doomed.exited;
  const before = new Set(receiver.received.map((r) => String(r.headers['webhook-id']))).size;
  assert.ok(before < 1000, 'killed during the burst');
  const successor = worker(500);
  await successor.listening;
  await receiver.until(
    (r) => {
      const got = new Set(r.map((x) => String(x.headers['webhook-id'])));
      return events.every((e) => got.has(e.id));
    },
    60_000,
    'every event',
  );
  await successor.stop();
});

test("a silent endpoint with a backlog of 300 holds 4 sends of each worker; another endpoint's events arrive meanwhile", async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  // An endpoint that never answers: each request stays open until the sender's timeout closes it.
  let open = 0;
  let mostOpen = 0;
  let firstClosedAt = Infinity;
  const silent = createServer((req, res) => {
    mostOpen = Math.max(mostOpen, ++open);
    req.resume();
    res.on('close', () => {
      open--;
      firstClosedAt = Math.min(firstClosedAt, Date.now());
    });
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const receiver = await startReceiver();
  const [a, b] = [worker(5000), worker(5000)];
  await Promise.all([a.listening, b.listening]);
  try {
    await writeEvents(app, `http://127.0.0.1:${(silent.address() as AddressInfo).port}/silent`, 300, 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const quiet = await writeEvents(app, receiver.url(), 20, 1);
    await receiver.until(receivedAll(quiet), 30_000, "the other endpoint's events");
    assert.ok(Date.now() < firstClosedAt, "every one arrived while the silent endpoint's first requests still hung");
    assert.ok(
      mostOpen <= 8 && mostOpen >= 4,
      `the silent endpoint held ${mostOpen} sends at once: at most 4 of each of the 2 workers`,
    );
  } finally {
    silent.closeAllConnections();
    silent.close();
    await Promise.all([a.stop(), b.stop()]);
  }
});

test.run();
