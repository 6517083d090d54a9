import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import type { ClaimedDelivery } from '../../domain/delivery.ts';
import {
  account,
  claimAll,
  DAY,
  orderEvent,
  recordDelivered,
  savedOrderEvent,
  saveWithEvents,
  webhookConfig,
} from '../contracts/samples.ts';
import { untilWaitingForALock } from '../support/lock-waits.ts';
import { sharedDatabase } from '../support/shared.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// One order's deliveries follow its events' feed positions (CONTRACT §7, §10), not the order their rows were inserted
// in: a transaction that wrote first and committed last comes after. Two transactions at once need a server.
const test = suite("delivery order across transactions: the feed's, not the insert's");

test('an event inserted first and committed last is sent after the one committed (and positioned) before it', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const run = mikroOrmTransact((await sharedDatabase()).orm);
  const brand = account();
  const now = new Date('2026-07-01T00:00:00.000Z');
  const config = webhookConfig(brand.id, 'https://hooks.example.com/late', now);
  const event = (name: string) => orderEvent(config, 'the-order', now, { _eid: name, name });
  await saveWithEvents(run, brand, config, []);
  const [slow, fast] = [event('inserted first, committed last'), event('inserted second, committed first')];
  // The slow writer on a connection of its own, inserting as the outbox does, and holding its transaction open.
  const writer = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await writer.connect();
  try {
    await writer.query('begin');
    await writer.query(
      `insert into events (id, account_id, scope, type, order_id, payload, endpoint_id, created_at)
      values ($1, $2, 'brand', 'OrderStatusEvent', 'the-order', $3::json, $4, $5)`,
      [slow.id, brand.id, JSON.stringify(slow.payload), config.id, now],
    );
    await writer.query(
      `insert into deliveries (id, event_id, endpoint_id, account_id, order_id, status, attempts, next_attempt_at, created_at, updated_at)
      values (gen_random_uuid(), $1, $2, $3, 'the-order', 'pending', 0, $4, $4, $4)`,
      [slow.id, config.id, brand.id, now],
    );
    await run((r) => r.events.add([fast]));
    // The feed's sequencer runs between the two commits, as it may in any worker.
    await run((r) => r.eventFeed.sequence(10_000));
    await writer.query('commit');
  } finally {
    await writer.end();
  }

  const received: string[] = [];
  for (let round = 0; round < 4; round++) {
    const claimed = (await run((r) => claimAll(r, 100, now, new Date(now.getTime() + 60_000), randomUUID()))).filter(
      (d) => d.eventId === slow.id || d.eventId === fast.id,
    );
    received.push(...claimed.map((d) => JSON.parse(d.body).name as string));
    await run((r) => recordDelivered(r, claimed, now));
  }
  while ((await run((r) => r.eventFeed.sequence(10_000))) > 0);
  const feed = await run((r) => r.eventFeed.page(config.id, 0, 10).then((p) => p.entries));
  const names = feed.map((e) => JSON.parse(e.payload).name);
  assert.equal(names, [fast.payload.name, slow.payload.name], 'the feed has them in commit order');
  assert.equal(received, names, 'and the deliveries follow the feed');
});

test('a redelivery that waited for a lock while a sender claimed the delivery leaves that claim alone', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const run = mikroOrmTransact((await sharedDatabase()).orm);
  const now = new Date('2026-07-02T00:00:00.000Z');
  const { config, event } = await savedOrderEvent(run, 'https://hooks.example.com/race', 'raced', now);
  while ((await run((r) => r.eventFeed.sequence(10_000))) > 0);
  const mine = (claimed: readonly ClaimedDelivery[]) => claimed.filter((d) => d.eventId === event.id);
  const first = mine(await run((r) => claimAll(r, 100, now, new Date(now.getTime() + 60_000), randomUUID())));
  await run((r) => recordDelivered(r, first, now));
  const [logged] = await run((r) => r.deliveryLog.list({ endpointId: config.id, limit: 1 }));
  // Another redelivery holds the delivery's row: this one waits for it, its snapshot taken while nothing was queued.
  // The other queues the delivery (committed) and a sender claims it, all before this one goes on.
  const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query('select 1 from deliveries where id = $1 for update', [logged!.id]);
    const redelivered = run((r) => r.deliveryLog.redeliver(logged!.id, new Date(now.getTime() + 1000)));
    await untilWaitingForALock(holder, '', true);
    await (await sharedDatabase()).orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into delivery_queue
           (delivery_id, event_id, endpoint_id, order_id, position, attempts, next_attempt_at, created_at)
       select d.id, d.event_id, d.endpoint_id, d.order_id, e.position, d.attempts, ?, d.created_at
       from deliveries d join events e on e.id = d.event_id where d.id = ?`,
        [now, logged!.id],
      );
    const [claimed] = mine(await run((r) => claimAll(r, 100, now, new Date(now.getTime() + 60_000), randomUUID())));
    assert.ok(claimed, 'the sender claimed it meanwhile');
    await holder.query('commit');
    assert.is(await redelivered, true);
    await run((r) => recordDelivered(r, [claimed!], now));
    const [after] = await run((r) => r.deliveryLog.list({ endpointId: config.id, limit: 1 }));
    assert.is(after!.status, 'delivered', "the sender's claim was still the delivery's: its outcome counted");
  } finally {
    await holder.end();
  }
});

// A redelivery locks the queue row first (the order a record and the purge take them in), then the log's row; while it
// waits for the latter, a claim passes that queue row over instead of waiting behind it, and hands it out once the
// redelivery has made it due.
test('a claim beside a redelivery waiting for the log row passes its queued row over, then finds it due', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const run = mikroOrmTransact((await sharedDatabase()).orm);
  const now = new Date('2018-09-01T00:00:00.000Z');
  const { event } = await savedOrderEvent(run, 'https://hooks.example.com/redelivery-waits', 'waits', now);
  const at = (ms: number) => new Date(now.getTime() + ms);
  const claim = async (ms: number) =>
    (await run((r) => claimAll(r, 100, at(ms), at(ms + 60_000), randomUUID()))).filter((d) => d.eventId === event.id);
  const [tried] = await claim(0);
  // Its first try answered 500: it waits in the queue for its retry, an hour on.
  await run((r) =>
    r.deliveryQueue.record(
      [
        {
          deliveryId: tried!.id,
          endpointId: tried!.endpointId,
          claimToken: tried!.claimToken,
          createdAt: tried!.createdAt,
          attempt: { at: now, statusCode: 500, durationMs: 1, error: 'HTTP 500' },
          exchange: null,
          state: { status: 'pending', nextAttemptAt: at(3_600_000) },
        },
      ],
      now,
      DAY,
    ),
  );
  const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query('select 1 from deliveries where id = $1 for update', [tried!.id]);
    const redelivered = run((r) => r.deliveryLog.redeliver(tried!.id, at(1000)));
    await untilWaitingForALock(holder, '', true);
    const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 5000).unref());
    assert.equal(await Promise.race([claim(3_600_001), late]), [], 'passed over at once: the redelivery holds it');
    await holder.query('commit');
    assert.is(await redelivered, true);
  } finally {
    await holder.end();
  }
  const [again] = await claim(1000);
  assert.is(again?.id, tried!.id, "due at the redelivery's time, not its retry's");
  await run((r) => recordDelivered(r, [again!], at(1000)));
});

test.run();
