import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Database, openDatabase } from '../../adapters/persistence/database/open.ts';
import { FamilyMemo } from '../../adapters/persistence/family-memo.ts';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { SqlWebhookConfigRepository } from '../../adapters/persistence/webhook-config-repository.ts';
import { account, webhookConfig } from '../contracts/samples.ts';
import { untilWaitingForALock } from '../support/lock-waits.ts';
import { sharedDatabase } from '../support/shared.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// The webhook configurations' memo of a unit of work forgets a configuration before its save and after it: a read on
// another connection while the save waits for a lock sees the row as it stood, and must not be what the unit answers
// once the save is done. Two connections at once need a server.
const test = suite("the webhook configurations' memo around a save");

/** A new brand with a configuration at `url`, saved. */
async function savedConfig(orm: Database['orm'], url: string) {
  const brand = account();
  const config = webhookConfig(brand.id, url, new Date('2026-07-04T00:00:00.000Z'));
  await mikroOrmTransact(orm)(async (r) => {
    await r.accounts.save(brand);
    await r.webhookConfigs.save(config);
  });
  return { brand, config };
}

test('a configuration read while its save waits for a lock is read again after the save', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const { orm } = await sharedDatabase();
  const { brand, config } = await savedConfig(orm, 'https://hooks.example.com/before');

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

test("a unit's read of a configuration that fails is not kept: the next find reads again", async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  // A database of its own, whose pool's word on the lost connection is kept here rather than printed.
  const warnings: string[] = [];
  const database = await openDatabase({
    url: process.env.DATABASE_URL,
    pgliteDir: 'memory://',
    driverWarning: (w) => warnings.push(w),
  });
  try {
    await readFailsOnce(database.orm);
  } finally {
    await database.close();
  }
  assert.ok(
    warnings.every((w) => /^Connection Error: /.test(w)),
    JSON.stringify(warnings),
  );
});

async function readFailsOnce(orm: Database['orm']) {
  const { brand } = await savedConfig(orm, 'https://hooks.example.com/kept');
  const configs = new SqlWebhookConfigRepository(orm.em.fork(), new FamilyMemo());
  // The read waits behind a lock of the whole table, and its session is ended under it: a real failed read.
  const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await holder.connect();
  let failed: unknown = null;
  try {
    await holder.query('begin');
    await holder.query('lock table webhook_configs in access exclusive mode');
    const reading = configs.find(brand.id, 'brand').catch((error: unknown) => {
      failed = error;
    });
    const [pid] = await untilWaitingForALock(holder, 'select id, account_id, scope, url');
    await holder.query('select pg_terminate_backend($1)', [pid]);
    await reading;
  } finally {
    await holder.query('commit');
    await holder.end();
  }
  assert.ok(failed, 'the first read failed');
  const again = await configs.find(brand.id, 'brand');
  assert.is(again?.url, 'https://hooks.example.com/kept', 'read again, not the failure kept');
}

test.run();
