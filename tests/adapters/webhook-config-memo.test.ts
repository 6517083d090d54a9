import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FamilyMemo } from '../../adapters/persistence/family-memo.ts';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { SqlWebhookConfigRepository } from '../../adapters/persistence/webhook-config-repository.ts';
import { account, webhookConfig } from '../contracts/samples.ts';
import { sharedDatabase } from '../support/shared.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// The webhook configurations' memo of a unit of work forgets a configuration before its save and after it: a read on
// another connection while the save waits for a lock sees the row as it stood, and must not be what the unit answers
// once the save is done. Two connections at once need a server.
const test = suite("the webhook configurations' memo around a save");

/** Resolves once a session of this database waits for a lock (the save, for the row the holder locked). */
async function untilWaitingForALock(client: pg.Client) {
  for (let tries = 0; tries < 200; tries++) {
    const { rows } = await client.query(
      `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    );
    if (rows.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the save never waited for the row lock');
}

test('a configuration read while its save waits for a lock is read again after the save', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const { orm } = await sharedDatabase();
  const brand = account();
  const now = new Date('2026-07-04T00:00:00.000Z');
  const config = webhookConfig(brand.id, 'https://hooks.example.com/before', now);
  await mikroOrmTransact(orm)(async (r) => {
    await r.accounts.save(brand);
    await r.webhookConfigs.save(config);
  });

  // No transaction: the repository's statements take pooled connections, so a read may run beside the save.
  const configs = new SqlWebhookConfigRepository(orm.em.fork(), new FamilyMemo());
  const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await holder.connect();
  let saving: Promise<void> | null = null;
  try {
    await holder.query('begin');
    await holder.query('select 1 from webhook_configs where id = $1 for update', [config.id]);
    config.configure('https://hooks.example.com/after', true);
    saving = configs.save(config);
    await untilWaitingForALock(holder);
    const beside = await configs.find(brand.id, 'brand');
    assert.is(beside?.url, 'https://hooks.example.com/before', 'read beside the save, as the row stood');
  } finally {
    await holder.query('commit');
    await holder.end();
    await saving;
  }
  const after = await configs.find(brand.id, 'brand');
  assert.is(after?.url, 'https://hooks.example.com/after', 'read again once saved');
});

test.run();
