import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { account, claimAll, numberedEvent, recordDelivered, webhookConfig } from '../contracts/samples.ts';
import { sharedDatabase } from '../support/shared.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// Two workers' claims at once, neither running a sequencing round (so neither waits for the other's lock): the second
// passes over what the first has locked and takes the next due deliveries. A claim that narrowed its choice to as many
// as it takes before skipping the locked ones came back empty beside another. Two transactions at once need a server.
const test = suite('delivery claims side by side');

test('a claim beside another takes the next due deliveries, not none', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const run = mikroOrmTransact((await sharedDatabase()).orm);
  const brand = account();
  // Older than any other suite's deliveries, claimed at a time before theirs: these claims see only these.
  const now = new Date('2019-01-01T00:00:00.000Z');
  const config = webhookConfig(brand.id, 'https://hooks.example.com/side-by-side', now);
  const events = Array.from({ length: 40 }, (_, n) => numberedEvent(config, n, now));
  await run(async (r) => {
    await r.accounts.save(brand);
    await r.webhookConfigs.save(config);
    await r.events.add(events);
  });
  const claimedAt = new Date(now.getTime() + 1000);
  const leaseUntil = new Date(now.getTime() + 60_000);
  const workers = [0, 1].map(() => new pg.Client({ connectionString: process.env.DATABASE_URL }));
  try {
    for (const w of workers) await w.connect();
    await workers[0]!.query('select sequence_round_waiting(1000)');
    const taken: string[][] = [];
    for (const w of workers) {
      await w.query('begin');
      const { rows } = await w.query<{ id: string }>(
        "select id from claim_deliveries_v6($1, $2, 8, $3, 1000, '{}', '{}', 0)",
        [claimedAt, leaseUntil, randomUUID()],
      );
      taken.push(rows.map((r) => r.id));
    }
    assert.equal(
      taken.map((ids) => ids.length),
      [8, 8],
      'each claim its 8',
    );
    assert.is(new Set(taken.flat()).size, 16, 'none claimed twice');
  } finally {
    for (const w of workers) await w.query('rollback').catch(() => {});
    for (const w of workers) await w.end();
  }
  // Leave nothing pending for the workers of later suites on a shared database.
  for (let left = await run((r) => claimAll(r, 100, claimedAt, leaseUntil, randomUUID())); left.length > 0; ) {
    await run((r) => recordDelivered(r, left, claimedAt));
    left = await run((r) => claimAll(r, 100, claimedAt, leaseUntil, randomUUID()));
  }
});

test.run();
