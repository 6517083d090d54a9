// The partner listing's stream: keyset batches that give every row once, whatever the ties, the rate of rows or the
// pool, and a failing read ahead (the page shapes: partner-order-queries.test.ts).
import { randomUUID } from 'node:crypto';
import { MikroORM } from '@mikro-orm/postgresql';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SqlPartnerOrderQueries } from '../../adapters/persistence/partner-order-queries.ts';
import { INACTIVE_STATUSES, JOB_STATUSES } from '../../domain/job.ts';
import { baseConfig } from '../../mikro-orm.config.ts';
import { sharedDatabase } from '../support/shared.ts';

const test = suite('partner listing SQL: the stream');

/** Jobs of three partners over seven distinct times (many ties), and the listing order they must come in. */
async function scopeWithTies(count: number) {
  const db = await sharedDatabase();
  const brand = randomUUID();
  const partners = [randomUUID(), randomUUID(), randomUUID()];
  const conn = db.orm.em.getConnection();
  const now = new Date('2026-01-01T00:00:00Z');
  await conn.execute(`insert into accounts (id, name, role, parent_id, created_at) values (?, 'b', 'brand', null, ?)`, [
    brand,
    now,
  ]);
  for (const p of partners)
    await conn.execute(
      `insert into accounts (id, name, role, parent_id, created_at) values (?, 'p', 'partner', null, ?)`,
      [p, now],
    );
  const jobs: { apiId: string; minute: number; status: string }[] = [];
  for (let i = 0; i < count; i++) {
    const job = {
      apiId: `ks-${brand.slice(0, 6)}-${(i * 37) % count}`,
      minute: i % 7,
      status: JOB_STATUSES[i % JOB_STATUSES.length]!,
    };
    jobs.push(job);
    // Microseconds the driver's Date cannot carry: a position kept as a Date would skip or repeat rows.
    await conn.execute(
      `insert into jobs (api_id, brand_account_id, partner_id, name, status, created_at, updated_at)
      values (?, ?, ?, 'O-1', ?, ?, ?::timestamptz + interval '17 microseconds')`,
      [job.apiId, brand, partners[i % 3], job.status, now, new Date(now.getTime() + job.minute * 60_000)],
    );
  }
  const order = (filter: { active: boolean }) =>
    jobs
      .filter((j) => !filter.active || !INACTIVE_STATUSES.includes(j.status as never))
      .sort((a, b) => b.minute - a.minute || (a.apiId < b.apiId ? -1 : 1))
      .map((j) => j.apiId);
  return { db, partners, order };
}

async function streamed(
  queries: SqlPartnerOrderQueries,
  partners: string[],
  active: boolean,
  offset: number,
  limit: number | null,
) {
  const ids: string[] = [];
  for await (const batch of queries.stream(partners, { updatedSince: null, active }, offset, limit))
    ids.push(...batch.map((j) => j.apiId));
  return ids;
}

test('the stream reads keyset batches that give every row of the scope once, in order, from any offset and to any limit', async () => {
  const { db, partners, order } = await scopeWithTies(60);
  const queries = new SqlPartnerOrderQueries(db.orm.em.fork(), 7);
  for (const active of [false, true]) {
    const expected = order({ active });
    for (const [offset, limit] of [
      [0, null],
      [0, 7],
      [0, 8],
      [3, null],
      [5, 16],
      [expected.length - 1, null],
      [expected.length + 3, null],
    ] as const) {
      assert.equal(
        await streamed(queries, partners, active, offset, limit),
        expected.slice(offset, limit === null ? undefined : offset + limit),
        `active ${active}, offset ${offset}, limit ${limit}`,
      );
    }
  }
});

test('a stream whose rate of rows changes (windows that hold the next batch, and windows that fall short) gives every row once, in order', async () => {
  const db = await sharedDatabase();
  const brand = randomUUID();
  const partners = [randomUUID(), randomUUID(), randomUUID()];
  const conn = db.orm.em.getConnection();
  const now = new Date('2026-01-01T00:00:00Z');
  await conn.execute(`insert into accounts (id, name, role, parent_id, created_at) values (?, 'b', 'brand', null, ?)`, [
    brand,
    now,
  ]);
  for (const p of partners)
    await conn.execute(
      `insert into accounts (id, name, role, parent_id, created_at) values (?, 'p', 'partner', null, ?)`,
      [p, now],
    );
  // Dense, then sparse (a gap of hours), then dense again with ties: each window is sized by the batch before it.
  const seconds = [
    ...Array.from({ length: 40 }, (_, i) => i),
    ...Array.from({ length: 10 }, (_, i) => 3600 * (i + 1)),
    ...Array.from({ length: 40 }, (_, i) => 40_000 + (i % 9)),
  ];
  const jobs = seconds.map((s, i) => ({
    apiId: `rw-${brand.slice(0, 6)}-${(i * 37) % seconds.length}`,
    s,
    status: JOB_STATUSES[i % JOB_STATUSES.length]!,
  }));
  for (const [i, j] of jobs.entries()) {
    await conn.execute(
      `insert into jobs (api_id, brand_account_id, partner_id, name, status, created_at, updated_at)
      values (?, ?, ?, 'O-1', ?, ?, ?::timestamptz + interval '17 microseconds')`,
      [j.apiId, brand, partners[i % 3], j.status, now, new Date(now.getTime() + j.s * 1000)],
    );
  }
  const queries = new SqlPartnerOrderQueries(db.orm.em.fork(), 6);
  for (const active of [false, true]) {
    const expected = jobs
      .filter((j) => !active || !INACTIVE_STATUSES.includes(j.status as never))
      .sort((a, b) => b.s - a.s || (a.apiId < b.apiId ? -1 : 1))
      .map((j) => j.apiId);
    for (const [offset, limit] of [
      [0, null],
      [4, 31],
      [11, null],
    ] as const) {
      assert.equal(
        await streamed(queries, partners, active, offset, limit),
        expected.slice(offset, limit === null ? undefined : offset + limit),
        `active ${active}, offset ${offset}, limit ${limit}`,
      );
    }
  }
});

test('a stream holds no connection while its consumer waits: a pool of one serves others between its batches', async () => {
  const { db, partners, order } = await scopeWithTies(30);
  // The embedded database has one connection; on a server, an ORM of its own with a pool of one.
  const orm =
    db.kind === 'embedded'
      ? db.orm
      : await MikroORM.init({
          ...baseConfig,
          clientUrl: db.url,
          pool: { min: 0, max: 1 },
          driverOptions: { acquireConnectionTimeout: 2000 },
        });
  try {
    const batches = new SqlPartnerOrderQueries(orm.em.fork(), 10)
      .stream(partners, { updatedSince: null, active: false }, 0, null)
      [Symbol.asyncIterator]();
    const ids = (await batches.next()).value!.map((j: { apiId: string }) => j.apiId);
    // The consumer stalls here. Before: the stream held the pool's one connection through a cursor, and this waited for
    // it.
    const other = await Promise.race([
      orm.em
        .fork()
        .getConnection()
        .execute<{ one: number }[]>('select 1 as one')
        .then((rows) => rows[0]!.one),
      new Promise((resolve) => setTimeout(() => resolve('waited for the stream'), 3000)),
    ]);
    assert.is(other, 1);
    for (let next = await batches.next(); !next.done; next = await batches.next())
      ids.push(...next.value.map((j) => j.apiId));
    assert.equal(ids, order({ active: false }));
  } finally {
    if (orm !== db.orm) await orm.close();
  }
});

test('a batch read ahead that fails is thrown when the stream comes to it, never left as an unhandled rejection', async () => {
  const row = (i: number) => ({
    api_id: `ra-${i}`,
    brand_account_id: 'b',
    partner_id: 'p',
    name: 'O-1',
    status: 'open',
    invoicing_eid: null,
    eid: null,
    ext_partner_id: null,
    customer: null,
    customer_billing: null,
    shipping_address: null,
    products: null,
    documents: null,
    order_type: null,
    project_id: null,
    project_name: null,
    appointment_start: null,
    appointment_end: null,
    start_timestamp: null,
    finish_timestamp: null,
    created_at: '2026-01-01 00:00:00+00',
    updated_at: `2026-01-01 00:00:0${9 - i}+00`,
  });
  const lost = Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
  let statements = 0;
  const client = { query: async () => (++statements === 1 ? { rows: [row(0), row(1)] } : Promise.reject(lost)) };
  const em = {
    getTransactionContext: () => undefined,
    getKnex: () => ({ client: { acquireConnection: async () => client, releaseConnection: async () => {} } }),
  };
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const batches = new SqlPartnerOrderQueries(em as never, 2)
      .stream(['p'], { updatedSince: null, active: false }, 0, null)
      [Symbol.asyncIterator]();
    assert.equal(
      (await batches.next()).value!.map((j: { apiId: string }) => j.apiId),
      ['ra-0', 'ra-1'],
    );
    // The consumer is busy with its batch while the read ahead fails.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.is(statements, 2);
    assert.equal(unhandled, []);
    const failure = await batches.next().then(
      () => null,
      (error: unknown) => error,
    );
    assert.ok(failure, 'the next batch fails');
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test.run();
