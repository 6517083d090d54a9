import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { withDriverConnection } from '../../adapters/persistence/driver.ts';
import { countQuery, type JobRow, pageQuery, rowsToJobs } from '../../adapters/persistence/partner-order-queries.ts';
import { INACTIVE_STATUSES, JOB_STATUSES } from '../../domain/job.ts';
import { sharedDatabase } from '../support/shared.ts';

const test = suite('partner listing SQL: both page shapes');

test('shallow (per-partner top-k) and deep (merged index scans) pages agree with each other and with the oracle', async () => {
  const db = await sharedDatabase();
  const brand = randomUUID();
  const partners = [randomUUID(), randomUUID(), randomUUID()];
  const jobs: { apiId: string; partner: string; minute: number; status: string }[] = [];
  for (let i = 0; i < 90; i++) {
    jobs.push({
      apiId: `pq-${brand.slice(0, 6)}-${(i * 37) % 90}`,
      partner: partners[i % 3]!,
      minute: i % 7,
      status: JOB_STATUSES[i % JOB_STATUSES.length]!,
    });
  }
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
  for (const j of jobs) {
    await conn.execute(
      `insert into jobs (api_id, brand_account_id, partner_id, name, status, created_at, updated_at) values (?, ?, ?, 'O-1', ?, ?, ?)`,
      [j.apiId, brand, j.partner, j.status, now, new Date(now.getTime() + j.minute * 60_000)],
    );
  }
  const em = db.orm.em.fork();
  for (const active of [false, true]) {
    const filter = { updatedSince: active ? null : new Date(now.getTime() + 2 * 60_000), active };
    const expected = jobs
      .filter(
        (j) => (!filter.updatedSince || j.minute >= 2) && (!active || !INACTIVE_STATUSES.includes(j.status as never)),
      )
      .sort((a, b) => b.minute - a.minute || (a.apiId < b.apiId ? -1 : 1))
      .map((j) => j.apiId);
    const total = await withDriverConnection(
      em,
      async (c) => (await c.query<{ n: number }>(countQuery(partners, filter))).rows[0]!.n,
    );
    assert.is(total, expected.length);
    for (const [offset, limit] of [
      [0, 5],
      [3, 4],
      [10, 10],
      [37, 7],
      [expected.length - 2, 5],
      [expected.length + 5, 5],
    ] as const) {
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

test.run();
