import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import type { ClaimedDelivery, DeliveryResult } from '../../domain/delivery.ts';
import type { WebhookConfigProps } from '../../domain/webhook-config.ts';
import {
  account,
  claimAll,
  DAY,
  numberedEvent,
  type Run,
  recordDelivered,
  webhookConfig,
} from '../contracts/samples.ts';
import { untilWaitingForALock } from '../support/lock-waits.ts';
import { sharedDatabase } from '../support/shared.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// A record judges an endpoint's health from what it locks (CONTRACT §11): the URL it compares tries with must be the
// one of the row it locks (a failed try to the URL it had before says nothing of the new one), and a 2xx that another
// record knew while it held the row counts (failing is "after its last 2xx"), though it came after this record's
// snapshot. A try recorded again while its first record runs is logged once. A redelivery beside a record takes the
// rows in the record's order (the queue's row, then the log's), so the two never wait for each other in a cycle. Two
// transactions at once need a server.
const test = suite('a record beside other writers');

const run: Run = async (work) => mikroOrmTransact((await sharedDatabase()).orm)(work);

/**
 * A brand whose endpoint at `url` has one delivery, claimed a second after `now`: older than any other suite's
 * deliveries, and claimed at a time before theirs, so that the claim sees only this one.
 */
async function oneClaimed(now: Date, url: string, changes: Partial<WebhookConfigProps> = {}) {
  const brand = account();
  const config = webhookConfig(brand.id, url, now, 'brand', changes);
  await run(async (r) => {
    await r.accounts.save(brand);
    await r.webhookConfigs.save(config);
    await r.events.add([numberedEvent(config, 0, now)]);
  });
  const claimedAt = new Date(now.getTime() + 1000);
  const [claimed] = await run((r) => claimAll(r, 100, claimedAt, new Date(now.getTime() + DAY), randomUUID()));
  assert.ok(claimed);
  return { brand, config, claimed, claimedAt };
}

/** A failed try of `claimed` to `url`, begun at `at`, with its next attempt `retryInMs` later. */
const failedTry = (
  claimed: ClaimedDelivery,
  url: string,
  at: Date,
  statusCode: number | null,
  retryInMs: number,
): DeliveryResult => ({
  deliveryId: claimed.id,
  endpointId: claimed.endpointId,
  claimToken: claimed.claimToken,
  createdAt: claimed.createdAt,
  attempt: { at, statusCode, durationMs: 1, error: statusCode === null ? 'timed out' : `HTTP ${statusCode}` },
  exchange: {
    request: { url, headers: {} },
    response: statusCode === null ? null : { headers: {}, body: '' },
  },
  state: { status: 'pending', nextAttemptAt: new Date(at.getTime() + retryInMs) },
});

/** Records `result` at `at` while another transaction, which ran `change` on the endpoint's row, holds it. */
async function recordWhileHeld(change: string, values: unknown[], result: DeliveryResult, at: Date) {
  const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await holder.connect();
  let recording: Promise<unknown> | null = null;
  try {
    await holder.query('begin');
    await holder.query(change, values);
    recording = run((r) => r.deliveryQueue.record([result], at, DAY));
    await untilWaitingForALock(holder, '', true);
  } finally {
    await holder.query('commit');
    await holder.end();
    await recording;
  }
}

/** Leaves nothing pending for the workers of later suites on a shared database. */
async function deliverWhatIsLeft(at: Date) {
  const left = await run((r) => claimAll(r, 100, at, new Date(at.getTime() + DAY), randomUUID()));
  await run((r) => recordDelivered(r, left, at));
}

test('a failed try to the URL an endpoint had before a change that committed meanwhile leaves it healthy', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const now = new Date('2019-02-01T00:00:00.000Z');
  const before = 'https://hooks.example.com/before-the-change';
  const { brand, config, claimed, claimedAt } = await oneClaimed(now, before);

  await recordWhileHeld(
    'update webhook_configs set url = $2, failing_since = null where id = $1',
    [config.id, 'https://hooks.example.com/after-the-change'],
    failedTry(claimed, before, claimedAt, 500, 1000),
    claimedAt,
  );
  const stored = await run((r) => r.webhookConfigs.find(brand.id, 'brand'));
  assert.equal([stored?.url, stored?.failingSince], ['https://hooks.example.com/after-the-change', null]);

  await deliverWhatIsLeft(new Date(now.getTime() + DAY));
});

test("a failure recorded while a later 2xx's record held the endpoint leaves it healthy", async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const now = new Date('2019-03-01T00:00:00.000Z');
  const url = 'https://hooks.example.com/later-2xx';
  const { brand, config, claimed, claimedAt } = await oneClaimed(now, url, { failingSince: now });

  // As the record of a 2xx that began at +2 s, after the failure below began, does while it holds the endpoint.
  await recordWhileHeld(
    'update webhook_configs set failing_since = null, last_ok_at = $2 where id = $1',
    [config.id, new Date(now.getTime() + 2000)],
    failedTry(claimed, url, claimedAt, null, DAY),
    new Date(now.getTime() + 11_000),
  );
  const stored = await run((r) => r.webhookConfigs.find(brand.id, 'brand'));
  assert.is(stored?.failingSince, null, 'no attempt without a 2xx after the last 2xx');
  // A new URL starts its health afresh: the old one's last 2xx is forgotten with its failing.
  const lastOk = async () =>
    (
      await (
        await sharedDatabase()
      ).orm.em
        .fork()
        .getConnection()
        .execute<{ last_ok_at: Date | null }[]>('select last_ok_at from webhook_configs where id = ?', [config.id])
    )[0]!.last_ok_at;
  assert.ok(await lastOk());
  stored!.configure('https://hooks.example.com/later-2xx-moved', true);
  await run((r) => r.webhookConfigs.save(stored!));
  assert.is(await lastOk(), null);

  await deliverWhatIsLeft(new Date(now.getTime() + 2 * DAY));
});

test('a try recorded again while its first record is still running is logged once', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const now = new Date('2019-04-01T00:00:00.000Z');
  const url = 'https://hooks.example.com/recorded-again';
  const { claimed, claimedAt } = await oneClaimed(now, url);

  // What the first record has done, not yet committed, when the worker (its answer lost) records the try again.
  await recordWhileHeld(
    `with logged as (
       insert into delivery_attempts (delivery_id, endpoint_id, at, status_code, duration_ms, request_url, created_at)
       values ($1, $2, $3, 500, 1, $4, $5))
     update delivery_queue set attempts = attempts + 1, lease_until = null, claim_token = null where delivery_id = $1`,
    [claimed.id, claimed.endpointId, claimedAt, url, claimed.createdAt],
    failedTry(claimed, url, claimedAt, 500, 1000),
    claimedAt,
  );
  const [logged] = await (await sharedDatabase()).orm.em
    .fork()
    .getConnection()
    .execute<{ n: number }[]>('select count(*)::int as n from delivery_attempts where delivery_id = ?', [claimed.id]);
  assert.is(logged?.n, 1, 'the try is logged once');

  await deliverWhatIsLeft(new Date(now.getTime() + DAY));
});

test('a redelivery beside the record of a try whose lease ran out waits for it, and neither fails', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const now = new Date('2019-05-01T00:00:00.000Z');
  const { claimed } = await oneClaimed(now, 'https://hooks.example.com/redelivered-while-recorded');
  const afterTheLease = new Date(now.getTime() + 2 * DAY);

  // The record's steps in its order: the queue's row leaves, then the log's row follows. Between them, an integrator
  // redelivers the delivery, whose lease has run out (so it is not left to its sender).
  const recorder = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await recorder.connect();
  let redelivering: Promise<boolean> | null = null;
  try {
    await recorder.query('begin');
    await recorder.query("set local deadlock_timeout = '100ms'");
    await recorder.query('delete from delivery_queue where delivery_id = $1', [claimed.id]);
    redelivering = run((r) => r.deliveryLog.redeliver(claimed.id, afterTheLease));
    await untilWaitingForALock(recorder, '', true);
    // With the log's row taken first by the redelivery, this waited for it in a cycle, and one of the two was aborted.
    await recorder.query("update deliveries set status = 'delivered', attempts = attempts + 1 where id = $1", [
      claimed.id,
    ]);
    await recorder.query('commit');
  } finally {
    await recorder.query('rollback').catch(() => {});
    await recorder.end();
  }
  assert.is(await redelivering, true, 'the redelivery went through once the record had committed');
  const [state] = await (await sharedDatabase()).orm.em
    .fork()
    .getConnection()
    .execute<{ status: string; queued: number }[]>(
      `select d.status, (select count(*)::int from delivery_queue q where q.delivery_id = d.id) as queued
       from deliveries d where d.id = ?`,
      [claimed.id],
    );
  assert.equal(state, { status: 'pending', queued: 1 }, 'delivered, then pending again and queued');

  await deliverWhatIsLeft(afterTheLease);
});

test.run();
