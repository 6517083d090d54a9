import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { account, claimAll, DAY, numberedEvent, recordDelivered, webhookConfig } from '../contracts/samples.ts';
import { untilWaitingForALock } from '../support/lock-waits.ts';
import { sharedDatabase } from '../support/shared.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// A record judges an endpoint's health from the tries sent to its current URL (CONTRACT §11: failing "after its URL was
// set"). The URL it compares with must be the one of the row it locks: a URL changed while the record waited for that
// lock makes a failed try to the old URL say nothing of the new one. Two transactions at once need a server.
const test = suite('a record beside a change of URL');

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

test.run();
