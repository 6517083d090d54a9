import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { processClient } from '../../support/process.ts';
import { onPostgres, skipUnless } from '../../support/skip.ts';
import { restartableReceiver } from './receiver.ts';
import {
  ADMIN,
  brandWithOrders,
  deliveriesOf,
  refreshOrder,
  service,
  sleep,
  sqlOn,
  tempDir,
  untilExecuted,
  withFaultServer,
} from './support.ts';

// A webhook receiver away for a while: the retry schedule brings every event written meanwhile.
const test = suite('faults on PostgreSQL: a webhook receiver away');
withFaultServer(test);

test('a receiver away for a while: every event written meanwhile arrives once it is back, within the retry schedule', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  // WEBHOOK_RETRY_SCHEDULE shortened as the other delivery tests do: ten retries 1 s apart, 10 s in all, which
  // outlasts the 3 s the receiver is away; the default (5 s, 5 m, …) would make this take minutes.
  const dataDir = tempDir();
  const svc = service('all', 'faults_receiver', dataDir, {
    WEBHOOK_RETRY_SCHEDULE: Array(10).fill('1s').join(','),
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  const client = processClient(await svc.listening, ADMIN);
  const receiver = await restartableReceiver();
  const brand = await brandWithOrders(client, dataDir, 4, receiver.url());
  const sql = await sqlOn('faults_receiver');
  const before = (await deliveriesOf(sql, brand.accountId)).map((d) => d.event_id);
  await receiver.untilAll(before, 10_000, 'the events written while the receiver answered');

  await receiver.stop();
  const away = Date.now();
  // Events while it is away: each order changes three times (one OrderStatusEvent each), and commands add theirs.
  for (const status of ['appointment_confirmed', 'started', 'finished']) {
    for (const apiId of brand.orderIds) await client.admin('jobs.setStatus', { apiId, status });
  }
  const cids = brand.orderIds.map(() => randomUUID());
  for (const [i, cid] of cids.entries()) {
    const answer = await client.rest('/v3/commands', {
      method: 'POST',
      body: refreshOrder(cid, brand.orderIds[i]!),
      token: brand.token,
    });
    assert.is(answer.status, 202);
  }
  await untilExecuted(sql, brand.accountId, cids, 10_000);
  await sleep(Math.max(0, away + 3000 - Date.now()));
  // The receiver was really away: attempts failed with a refused connection, and nothing arrived meanwhile.
  const [refusedTries] = await sql<{ n: number }>(
    `select count(*)::int as n from delivery_attempts a join deliveries d on d.id = a.delivery_id
     where d.account_id = $1 and a.status_code is null and a.error like '%ECONNREFUSED%'`,
    [brand.accountId],
  );
  assert.ok(refusedTries!.n > 0, 'attempts met a refused connection while the receiver was away');
  assert.ok(
    receiver.arrivals.every((a) => a.at < away),
    'nothing arrived while the receiver was away',
  );

  const written = await deliveriesOf(sql, brand.accountId);
  const meanwhile = written.map((d) => d.event_id).filter((id) => !before.includes(id));
  assert.is(
    meanwhile.length,
    brand.orderIds.length * 3 + cids.length * 2,
    'three status events per order, and an order event and a result per command',
  );
  assert.ok(
    written.every((d) => d.status !== 'failed'),
    'no delivery gave up while the receiver was away',
  );
  await receiver.start();
  const back = Date.now();
  // Each order's first pending delivery is retried within 1 s (the schedule's step); the events behind it follow at
  // once. 5 s leaves room for a slow machine.
  await receiver.untilAll(meanwhile, 5000, 'events written while the receiver was away');
  assert.ok(
    receiver.arrivals.filter((a) => meanwhile.includes(a.id)).every((a) => a.at >= back),
    'they arrived after the receiver was back',
  );
  // Each order's events arrive in the order they were written (CONTRACT §7).
  const firstArrival = new Map<string, number>();
  receiver.arrivals.forEach((a, i) => {
    if (!firstArrival.has(a.id)) firstArrival.set(a.id, i);
  });
  for (const orderId of brand.orderIds) {
    const ofOrder = written.filter((d) => d.order_id === orderId).map((d) => firstArrival.get(d.event_id)!);
    assert.equal(
      ofOrder,
      [...ofOrder].sort((a, b) => a - b),
      `order ${orderId}: its events arrived out of order`,
    );
  }
  await sleep(300); // the last outcomes are recorded just after their answers
  const after = await deliveriesOf(sql, brand.accountId);
  assert.equal(
    after.filter((d) => d.status !== 'delivered').map((d) => `${d.event_id}: ${d.status}`),
    [],
    'deliveries not recorded as delivered',
  );
  await svc.stop();
});

test.run();
