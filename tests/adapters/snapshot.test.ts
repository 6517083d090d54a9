import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { Account } from '../../domain/account.ts';
import { sharedDatabase } from '../support/shared.ts';
import { snapshot, snapshotTables } from '../support/snapshot.ts';

const test = suite('the "changes nothing" snapshot');

test('covers every table of the schema (a partitioned one whole), commands and login_rate_limits too', async () => {
  const database = await sharedDatabase();
  const rows = await database.orm.em
    .getConnection()
    .execute<{ tablename: string }[]>(
      `select tablename from pg_tables where schemaname = 'public' and tablename <> 'mikro_orm_migrations'`,
    );
  const partitions = new Set(
    (
      await database.orm.em
        .getConnection()
        .execute<{ name: string }[]>(`select c.relname as name from pg_class c where c.relispartition`)
    ).map((r) => r.name),
  );
  assert.ok(partitions.has('events_default'), 'the history has partitions');
  const everyTable = rows
    .map((r) => r.tablename)
    .filter((t) => !partitions.has(t))
    .sort();
  for (const table of [
    'accounts',
    'jobs',
    'events',
    'deliveries',
    'delivery_attempts',
    'commands',
    'login_rate_limits',
    'event_feed_purged',
  ]) {
    assert.ok(everyTable.includes(table), `the schema has ${table}`);
  }
  assert.equal([...(await snapshotTables(database))].sort(), everyTable);
  assert.equal(Object.keys(await snapshot(database)).sort(), everyTable);
});

test('a command or a rate-limit counter stored is a change; removed again, the snapshot is as before', async () => {
  const database = await sharedDatabase();
  const transact = mikroOrmTransact(database.orm);
  const now = new Date();
  const account = new Account({ id: randomUUID(), name: 'snapshot', role: 'brand', parentId: null, createdAt: now });
  await transact((r) => r.accounts.save(account));

  const before = await snapshot(database);
  const cid = randomUUID();
  await transact(async (r) => {
    await r.commands.claim({ accountId: account.id, cid, type: 'RefreshOrder', body: { _cid: cid } }, now);
    await r.commands.finish(
      account.id,
      cid,
      { status: 'succeeded', result: { orderId: 'x' }, answer: { _cid: cid } },
      now,
    );
  });
  const withCommand = await snapshot(database);
  assert.equal(
    Object.keys(withCommand).filter((t) => withCommand[t] !== before[t]),
    ['commands'],
  );

  const key = `snapshot-${randomUUID()}`;
  const connection = database.orm.em.getConnection();
  await connection.execute('insert into login_rate_limits (key, points, expire) values (?, 1, ?)', [
    key,
    Date.now() + 60_000,
  ]);
  const withCounter = await snapshot(database);
  assert.equal(
    Object.keys(withCounter).filter((t) => withCounter[t] !== withCommand[t]),
    ['login_rate_limits'],
  );

  await connection.execute('delete from login_rate_limits where key = ?', [key]);
  await connection.execute('delete from commands where account_id = ? and cid = ?', [account.id, cid]);
  assert.equal(await snapshot(database), before);
});

test.run();
