import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { account, claimAll, DAY, numberedEvent, recordDelivered, webhookConfig } from '../contracts/samples.ts';
import { untilWaitingForALock } from '../support/lock-waits.ts';
import { sharedDatabase } from '../support/shared.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// A record judges an endpoint's health from what it locks (CONTRACT §11): the URL it compares tries with must be the
// one of the row it locks (a failed try to the URL it had before says nothing of the new one), and a 2xx that another
// record knew while it held the row counts (failing is "after its last 2xx"), though it came after this record's
// snapshot. Two transactions at once need a server.
const test = suite('a record beside a change of its endpoint');

test('a failed try to the URL an endpoint had before a change that committed meanwhile leaves it healthy', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const run = mikroOrmTransact((await sharedDatabase()).orm);
  const brand = account();
  // Older than any other suite's deliveries, claimed at a time before theirs: the claim sees only this one.
  const now = new Date('2019-02-01T00:00:00.000Z');
  const before = 'https://hooks.example.com/before-the-change';
  const config = webhookConfig(brand.id, before, now);
  await run(async (r) => {
    await r.accounts.save(brand);
    await r.webhookConfigs.save(config);
    await r.events.add([numberedEvent(config, 0, now)]);
  });
  const claimedAt = new Date(now.getTime() + 1000);
  const [claimed] = await run((r) => claimAll(r, 100, claimedAt, new Date(now.getTime() + DAY), randomUUID()));
  assert.ok(claimed);

  const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await holder.connect();
  let recording: Promise<unknown> | null = null;
  try {
    await holder.query('begin');
    await holder.query('update webhook_configs set url = $2, failing_since = null where id = $1', [
      config.id,
      'https://hooks.example.com/after-the-change',
    ]);
    recording = run((r) =>
      r.deliveryQueue.record(
        [
          {
            deliveryId: claimed.id,
            endpointId: claimed.endpointId,
            claimToken: claimed.claimToken,
            createdAt: claimed.createdAt,
            attempt: { at: claimedAt, statusCode: 500, durationMs: 1, error: 'HTTP 500' },
            exchange: { request: { url: before, headers: {} }, response: { headers: {}, body: '' } },
            state: { status: 'pending', nextAttemptAt: new Date(claimedAt.getTime() + 1000) },
          },
        ],
        claimedAt,
        DAY,
      ),
    );
    await untilWaitingForALock(holder, '', true);
  } finally {
    await holder.query('commit');
    await holder.end();
    await recording;
  }
  const stored = await run((r) => r.webhookConfigs.find(brand.id, 'brand'));
  assert.equal([stored?.url, stored?.failingSince], ['https://hooks.example.com/after-the-change', null]);

  // Leave nothing pending for the workers of later suites on a shared database.
  const left = await run((r) =>
    claimAll(r, 100, new Date(now.getTime() + DAY), new Date(now.getTime() + 2 * DAY), randomUUID()),
  );
  await run((r) => recordDelivered(r, left, new Date(now.getTime() + DAY)));
});

test("a failure recorded while a later 2xx's record held the endpoint leaves it healthy", async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const run = mikroOrmTransact((await sharedDatabase()).orm);
  const brand = account();
  const now = new Date('2019-03-01T00:00:00.000Z');
  const url = 'https://hooks.example.com/later-2xx';
  const config = webhookConfig(brand.id, url, now, 'brand', { failingSince: now });
  await run(async (r) => {
    await r.accounts.save(brand);
    await r.webhookConfigs.save(config);
    await r.events.add([numberedEvent(config, 0, now)]);
  });
  const claimedAt = new Date(now.getTime() + 1000);
  const [claimed] = await run((r) => claimAll(r, 100, claimedAt, new Date(now.getTime() + DAY), randomUUID()));
  assert.ok(claimed);

  const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await holder.connect();
  let recording: Promise<unknown> | null = null;
  try {
    // As the record of a 2xx that began at +2 s, after the failure below began, does while it holds the endpoint.
    await holder.query('begin');
    await holder.query('update webhook_configs set failing_since = null, last_ok_at = $2 where id = $1', [
      config.id,
      new Date(now.getTime() + 2000),
    ]);
    recording = run((r) =>
      r.deliveryQueue.record(
        [
          {
            deliveryId: claimed.id,
            endpointId: claimed.endpointId,
            claimToken: claimed.claimToken,
            createdAt: claimed.createdAt,
            attempt: { at: claimedAt, statusCode: null, durationMs: 10_000, error: 'timed out' },
            exchange: { request: { url, headers: {} }, response: null },
            state: { status: 'pending', nextAttemptAt: new Date(claimedAt.getTime() + DAY) },
          },
        ],
        new Date(now.getTime() + 11_000),
        DAY,
      ),
    );
    await untilWaitingForALock(holder, '', true);
  } finally {
    await holder.query('commit');
    await holder.end();
    await recording;
  }
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

  // Leave nothing pending for the workers of later suites on a shared database.
  const later = new Date(now.getTime() + 2 * DAY);
  const left = await run((r) => claimAll(r, 100, later, new Date(later.getTime() + DAY), randomUUID()));
  await run((r) => recordDelivered(r, left, later));
});

test.run();
