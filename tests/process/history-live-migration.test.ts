import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../adapters/persistence/database/open.ts';
import { testApp } from '../support/app.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// docs/operators.md, "Partitioning a live deployment's history", as an operator runs it: on a deployment of the schema
// before partitions, with writers of that version going on throughout, `db:migrate -- --prepare-partitions`, then
// `db:migrate`. Nothing written is lost or refused, no write waits long, and the new version reads the old rows.
const test = suite("partitioning a live deployment's history");
const run = promisify(execFile);
const BEFORE = 'Migration20261129140000_sequence_round_waiting';

/** One delivered event as the version before partitions wrote it: event, delivery and attempt, in one transaction. */
async function writeAsBefore(client: pg.Client, accountId: string, endpointId: string, n: number) {
  await client.query('begin');
  const {
    rows: [event],
  } = await client.query<{ id: string }>(
    `insert into events (id, account_id, scope, type, order_id, payload, endpoint_id, created_at)
     values (gen_random_uuid(), $1, 'brand', 'OrderStatusEvent', $3, $4, $2, now()) returning id`,
    [accountId, endpointId, `order-${n % 7}`, JSON.stringify({ _type: 'OrderStatusEvent', n })],
  );
  const {
    rows: [delivery],
  } = await client.query<{ id: string }>(
    `insert into deliveries
       (id, event_id, endpoint_id, account_id, order_id, status, attempts, next_attempt_at, created_at, updated_at)
     values (gen_random_uuid(), $1, $2, $3, $4, 'delivered', 1, now(), now(), now()) returning id`,
    [event!.id, endpointId, accountId, `order-${n % 7}`],
  );
  await client.query(
    `insert into delivery_attempts (delivery_id, endpoint_id, at, status_code, duration_ms, request_url)
     values ($1, $2, now(), 200, 5, 'https://receiver.example/hook')`,
    [delivery!.id, endpointId],
  );
  await client.query('commit');
  return delivery!.id;
}

test('prepared without blocking, swapped under a brief lock: every write lands, old rows read as before', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL): concurrent writers and CREATE INDEX CONCURRENTLY'))
    return;
  const name = `live_partitions_${randomUUID().slice(0, 8)}`;
  const server = new URL(process.env.DATABASE_URL!);
  const admin = new pg.Client({ connectionString: server.href });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = Object.assign(new URL(server.href), { pathname: `/${name}` }).href;
  const old = await openDatabase({ url, pgliteDir: '', migrateTo: BEFORE });
  await old.close();

  const writer = new pg.Client({ connectionString: url });
  await writer.connect();
  const accountId = randomUUID();
  const endpointId = randomUUID();
  await writer.query(`insert into accounts (id, name, role, created_at) values ($1, 'live', 'brand', now())`, [
    accountId,
  ]);
  await writer.query(
    `insert into webhook_configs (id, account_id, scope, url, transformer, version, enabled, created_at, updated_at)
     values ($1, $2, 'brand', 'https://receiver.example/hook', 'default', '1.3.0', true, now(), now())`,
    [endpointId, accountId],
  );
  const firstDelivery = await writeAsBefore(writer, accountId, endpointId, 0);
  for (let n = 1; n < 2000; n++) await writeAsBefore(writer, accountId, endpointId, n);

  let written = 2000;
  let longest = 0;
  const errors: string[] = [];
  let writing = true;
  const writes = (async () => {
    while (writing) {
      const started = performance.now();
      try {
        await writeAsBefore(writer, accountId, endpointId, written);
        written++;
      } catch (error) {
        errors.push((error as Error).message);
        await writer.query('rollback').catch(() => {});
      }
      longest = Math.max(longest, performance.now() - started);
    }
  })();
  const cli = (...args: string[]) =>
    run('node_modules/.bin/tsx', ['server/migrate.ts', ...args], { env: { ...process.env, DATABASE_URL: url } });
  const prepared = await cli('--prepare-partitions');
  assert.match(prepared.stdout, /rows before .* stay in one partition of the past/);
  const duringPrepare = written;
  const migrated = await cli();
  assert.match(migrated.stdout, /Migration20261130000000_history_partitions/);
  const duringSwap = written;
  await new Promise((resolve) => setTimeout(resolve, 300));
  writing = false;
  await writes;

  assert.equal(errors, [], 'no write refused');
  assert.ok(duringPrepare > 2000 && duringSwap > duringPrepare && written > duringSwap, 'writes went on throughout');
  assert.ok(longest < 5000, `no write waited long (longest ${Math.round(longest)} ms)`);
  const counts = await writer.query<{ events: number; deliveries: number; attempts: number; legacy: number }>(
    `select (select count(*)::int from events) as events, (select count(*)::int from deliveries) as deliveries,
       (select count(*)::int from delivery_attempts) as attempts, (select count(*)::int from events_legacy) as legacy`,
  );
  assert.equal(
    counts.rows[0],
    { events: written, deliveries: written, attempts: written, legacy: written },
    'every row, in the partition of the past',
  );
  const bounds = await writer.query<{ name: string }>(
    `select name from history_partitions where lower is null order by name`,
  );
  assert.equal(
    bounds.rows.map((r) => r.name),
    ['deliveries_legacy', 'delivery_attempts_legacy', 'events_legacy'],
  );
  await writer.end();

  const database = await openDatabase({ url, pgliteDir: '' });
  const app = await testApp({}, { database });
  const detail = await app.admin.query<{ attempts: { statusCode: number; request: { url: string } }[] }>(
    'deliveries.get',
    { deliveryId: firstDelivery },
  );
  assert.equal(
    detail.attempts.map((a) => [a.statusCode, a.request.url]),
    [[200, 'https://receiver.example/hook']],
    'an old delivery reads with its attempt',
  );
  await app.close();
  await database.close();
  await admin.query(`drop database ${name} with (force)`);
  await admin.end();
});

test.run();
