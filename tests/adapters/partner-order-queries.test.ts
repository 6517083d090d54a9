import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { withDriverConnection } from '../../adapters/persistence/driver.ts';
import { countQuery, pageQuery, rowsToJobs, SqlPartnerOrderQueries, type JobRow } from '../../adapters/persistence/partner-order-queries.ts';
import { INACTIVE_STATUSES, JOB_STATUSES } from '../../domain/job.ts';
import { sharedDatabase } from '../support/shared.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

const test = suite('partner listing SQL: both page shapes');

test('shallow (per-partner top-k) and deep (merged index scans) pages agree with each other and with the oracle', async () => {
  const db = await sharedDatabase();
  const brand = randomUUID();
  const partners = [randomUUID(), randomUUID(), randomUUID()];
  const jobs: { apiId: string; partner: string; minute: number; status: string }[] = [];
  for (let i = 0; i < 90; i++) {
    jobs.push({ apiId: `pq-${brand.slice(0, 6)}-${(i * 37) % 90}`, partner: partners[i % 3]!, minute: i % 7, status: JOB_STATUSES[i % JOB_STATUSES.length]! });
  }
  const conn = db.orm.em.getConnection();
  const now = new Date('2026-01-01T00:00:00Z');
  await conn.execute(`insert into accounts (id, name, role, parent_id, created_at) values (?, 'b', 'brand', null, ?)`, [brand, now]);
  for (const p of partners) await conn.execute(`insert into accounts (id, name, role, parent_id, created_at) values (?, 'p', 'partner', null, ?)`, [p, now]);
  for (const j of jobs) {
    await conn.execute(`insert into jobs (api_id, brand_account_id, partner_id, name, status, created_at, updated_at) values (?, ?, ?, 'O-1', ?, ?, ?)`,
      [j.apiId, brand, j.partner, j.status, now, new Date(now.getTime() + j.minute * 60_000)]);
  }
  const em = db.orm.em.fork();
  for (const active of [false, true]) {
    const filter = { updatedSince: active ? null : new Date(now.getTime() + 2 * 60_000), active };
    const expected = jobs
      .filter((j) => (!filter.updatedSince || j.minute >= 2) && (!active || !INACTIVE_STATUSES.includes(j.status as never)))
      .sort((a, b) => b.minute - a.minute || (a.apiId < b.apiId ? -1 : 1)).map((j) => j.apiId);
    const total = await withDriverConnection(em, async (c) => (await c.query<{ n: number }>(countQuery(partners, filter))).rows[0]!.n);
    assert.is(total, expected.length);
    for (const [offset, limit] of [[0, 5], [3, 4], [10, 10], [37, 7], [expected.length - 2, 5], [expected.length + 5, 5]] as const) {
      const shallow = pageQuery(partners, filter, offset, limit, Infinity);
      const deep = pageQuery(partners, filter, offset, limit, 0);
      assert.match(deep.text, /union all/);
      assert.not.match(shallow.text, /union all/);
      const [a, b] = await withDriverConnection(em, async (c) => [
        rowsToJobs((await c.query<JobRow>(shallow)).rows).map((j) => j.apiId),
        rowsToJobs((await c.query<JobRow>(deep)).rows).map((j) => j.apiId),
      ]);
      assert.equal(a, expected.slice(offset, offset + limit), `shallow ${offset}/${limit}`);
      assert.equal(b, expected.slice(offset, offset + limit), `deep ${offset}/${limit}`);
    }
  }
});

test('a stream whose connection dies mid-way fails at once, and its connection is not reused', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const db = await sharedDatabase();
  const brand = randomUUID();
  const partner = randomUUID();
  const conn = db.orm.em.getConnection();
  const now = new Date('2026-01-01T00:00:00Z');
  await conn.execute(`insert into accounts (id, name, role, parent_id, created_at) values (?, 'b', 'brand', null, ?), (?, 'p', 'partner', null, ?)`, [brand, now, partner, now]);
  // More than one batch (500), so that the stream has to read again after the connection is gone.
  await conn.execute(`insert into jobs (api_id, brand_account_id, partner_id, name, status, created_at, updated_at)
    select 'dead-' || ? || '-' || g, ?, ?, 'O-1', 'open', ?, ? from generate_series(1, 1200) g`, [brand.slice(0, 8), brand, partner, now, now]);
  const batches = new SqlPartnerOrderQueries(db.orm.em.fork()).stream([partner], { updatedSince: null, active: false }, 0, null)[Symbol.asyncIterator]();
  assert.is((await batches.next()).value?.length, 500);
  const [backend] = await conn.execute<{ pid: number }[]>(`select pid from pg_stat_activity where query like '%partner_id = any%' and pid <> pg_backend_pid() and datname = current_database()`);
  assert.ok(backend, 'the stream\'s backend is found');
  await conn.execute('select pg_terminate_backend(?)', [backend.pid]);
  // Before: the failed read left pg-cursor's close waiting for an answer that never came, and the stream hung.
  const started = Date.now();
  const outcome = await Promise.race([
    (async () => { for (;;) { const next = await batches.next(); if (next.done) return 'ended'; } })().catch(() => 'failed'),
    new Promise((resolve) => setTimeout(() => resolve('hung'), 4000)),
  ]);
  assert.is(outcome, 'failed', `after ${Date.now() - started} ms`);
  // The pool serves on, with connections that work (the dead one was discarded, not handed out again).
  for (let i = 0; i < 5; i++) {
    const [row] = await db.orm.em.fork().getConnection().execute<{ one: number }[]>('select 1 as one');
    assert.is(row!.one, 1);
  }
});

test.run();
