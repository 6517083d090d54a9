import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testApp } from '../support/app.ts';
import { brandWithEndpoint, receivedAll, writeEvents, writeEventsOf } from '../support/delivery-events.ts';
import { type ServiceProcess, startService } from '../support/process.ts';
import { startReceiver } from '../support/receiver.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// The sender's circuit breaker in a worker of its own, on the suite's PostgreSQL server (CONTRACT §7): the claim's SQL
// is told what held-back endpoints may hold, and passes them over past it.
const test = suite('held-back endpoints in a worker process');
const server = process.env.DATABASE_URL;
let app: Awaited<ReturnType<typeof testApp>>;
let worker: ServiceProcess | undefined;
test.before(async () => {
  if (onPostgres) app = await testApp();
});
test.after(async () => {
  await worker?.stop('SIGKILL');
});

test('failing endpoints that hang hold half the sends, one each; another endpoint is served meanwhile', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  // Endpoints that never answer: each request stays open until the sender's timeout closes it.
  const open = new Map<string, number>();
  let [openAll, mostAll, mostOne, firstClosedAt] = [0, 0, 0, Infinity];
  const silent = createServer((req, res) => {
    const path = req.url ?? '';
    open.set(path, (open.get(path) ?? 0) + 1);
    mostOne = Math.max(mostOne, open.get(path)!);
    mostAll = Math.max(mostAll, ++openAll);
    req.resume();
    res.on('close', () => {
      open.set(path, open.get(path)! - 1);
      openAll--;
      firstClosedAt = Math.min(firstClosedAt, Date.now());
    });
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const silentBase = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/silent`;
  const receiver = await startReceiver();
  const db = new pg.Pool({ connectionString: server, max: 1 });
  try {
    // Six endpoints failing for an hour (§11), as endpoints are once their attempts got nothing: 6 × 4 sends would take
    // all eight of the worker's, and their backlogs (older) would fill its buffer.
    const crowd: string[] = [];
    for (let n = 0; n < 6; n++) crowd.push(await brandWithEndpoint(app, `${silentBase}/${n}`));
    await db.query(
      `update webhook_configs set failing_since = now() - interval '1 hour' where account_id = any($1::uuid[])`,
      [crowd],
    );
    for (const brandId of crowd) await writeEventsOf(app, brandId, 20, 1);
    worker = startService({
      DATABASE_URL: server!,
      SERVICE_ROLE: 'worker',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
      WEBHOOK_TIMEOUT_MS: '5000',
      WEBHOOK_MAX_IN_FLIGHT: '8',
      LOG_LEVEL: 'info',
    });
    await worker.listening;
    await new Promise((resolve) => setTimeout(resolve, 300));
    const quiet = await writeEvents(app, receiver.url(), 20, 1);
    await receiver.until(receivedAll(quiet), 30_000, "the other endpoint's events");
    assert.ok(Date.now() < firstClosedAt, "every one arrived while the crowd's first requests still hung");
    assert.ok(mostAll >= 1 && mostAll <= 4, `the crowd held ${mostAll} sends at once: half of eight at most`);
    assert.is(mostOne, 1, 'one send at a time to each of its endpoints');
    assert.match(worker.output(), /webhook endpoint at 127\.0\.0\.1:\d+ held back to one send at a time/);
  } finally {
    silent.closeAllConnections();
    silent.close();
    await db.end();
    await worker?.stop();
    worker = undefined;
  }
});

test.run();
