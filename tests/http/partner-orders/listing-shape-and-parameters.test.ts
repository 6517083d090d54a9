import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { integrator } from '../../support/integrators.ts';
import { app, at, brand, get, ids, jobs, master, masterScope, ownChild, withPartnerOrders } from './support.ts';

// The listings' payload, their filters and paging, malformed parameters, the legacy bare array, and updatedAt to the
// millisecond.
const test = suite('partner order polling over REST: payload, filters and paging');
withPartnerOrders(test);

test('payload: partner-format 1.3.0 with _eid "polled"', async () => {
  const res = await get(master, '/v3/partner-orders/paginated?pageSize=1');
  assert.equal(Object.keys(res.body.items[0]), [
    '_eid',
    '_type',
    '_v',
    'jobApiId',
    'gidOrderNumber',
    'invoicingEid',
    'yourOrderID',
    'status',
    'customer',
    'shippingAddress',
    'products',
    'appointmentStart',
    'appointmentEnd',
    'projectId',
    'projectName',
    'partnerId',
    'updatedAt',
  ]);
  assert.equal(
    [res.body.items[0]._eid, res.body.items[0]._type, res.body.items[0].partnerId],
    ['polled', 'OrderStatusEvent', ownChild.accountId],
  );
});

test('filters: updatedSince is inclusive; active excludes orders needing no partner action', async () => {
  const since = await get(master, `/v3/partner-orders/paginated?updatedSince=${encodeURIComponent(at(55))}`);
  assert.equal(ids(since.body.items), [jobs.o2, jobs.o1, jobs.tieA, jobs.tieZ]);
  assert.is(since.body.total, 4);
  const offset = await get(
    master,
    `/v3/partner-orders/paginated?updatedSince=${encodeURIComponent('2026-11-01T13:55:00+01:00')}`,
  );
  assert.equal(offset.body.total, 4, 'an offset is honoured');
  for (const value of ['true', '1']) {
    const active = await get(master, `/v3/partner-orders/paginated?active=${value}`);
    assert.equal(ids(active.body.items), [jobs.o1, jobs.tieA, jobs.tieZ, jobs.b1, jobs.a1, jobs.m1]);
    assert.is(active.body.total, 6);
  }
  for (const value of ['false', '0'])
    assert.is((await get(master, `/v3/partner-orders/paginated?active=${value}`)).body.total, 9);
  const both = await get(master, `/v3/partner-orders?active=1&updatedSince=${encodeURIComponent(at(50))}`);
  assert.equal(ids(both.body), [jobs.o1, jobs.tieA, jobs.tieZ, jobs.b1]);
});

test('paging: pages, a page past the end, clamping of pageSize', async () => {
  const p2 = await get(master, '/v3/partner-orders/paginated?page=2&pageSize=4');
  assert.equal(
    { page: p2.body.page, pageSize: p2.body.pageSize, total: p2.body.total },
    { page: 2, pageSize: 4, total: 9 },
  );
  assert.equal(ids(p2.body.items), masterScope().slice(4, 8));
  // A page boundary between two orders updated at the same instant: apiId decides, on both sides of it.
  const first = await get(master, '/v3/partner-orders/paginated?page=1&pageSize=3');
  const second = await get(master, '/v3/partner-orders/paginated?page=2&pageSize=3');
  assert.equal([...ids(first.body.items), ...ids(second.body.items)], masterScope().slice(0, 6));
  const past = await get(master, '/v3/partner-orders/paginated?page=50&pageSize=4');
  assert.equal({ items: past.body.items, total: past.body.total }, { items: [], total: 9 });
  const clamped = await get(master, '/v3/partner-orders/paginated?pageSize=500');
  assert.is(clamped.body.pageSize, 200);
  assert.is(clamped.body.items.length, 9);
  // Past what a JavaScript number holds exactly, digits are still a whole number: the same rules, not a 400.
  const huge = '99999999999999999999';
  const hugePage = await get(master, `/v3/partner-orders/paginated?page=${huge}&pageSize=${huge}`);
  assert.equal([hugePage.status, hugePage.body.items, hugePage.body.pageSize, hugePage.body.total], [200, [], 200, 9]);
  assert.equal(ids((await get(master, `/v3/partner-orders?limit=${huge}`)).body), masterScope());
  assert.equal((await get(master, `/v3/partner-orders?limit=2&offset=${huge}`)).body, []);
  const defaults = await get(master, '/v3/partner-orders/paginated');
  assert.equal([defaults.body.page, defaults.body.pageSize], [1, 50]);
  const empty = await get(master, '/v3/partner-orders/paginated?pageSize=&page=');
  assert.equal([empty.body.page, empty.body.pageSize], [1, 50], 'an empty value is an absent one');
  assert.equal(ids((await get(master, '/v3/partner-orders?limit=&offset=')).body), masterScope());
});

test('400 for malformed page, pageSize, limit, offset, updatedSince and active', async () => {
  const bad = [
    '/v3/partner-orders/paginated?page=0',
    '/v3/partner-orders/paginated?page=1.5',
    '/v3/partner-orders/paginated?page=abc',
    '/v3/partner-orders/paginated?pageSize=0',
    '/v3/partner-orders/paginated?pageSize=-1',
    '/v3/partner-orders/paginated?updatedSince=2026-11-01',
    '/v3/partner-orders/paginated?updatedSince=2026-11-01T12:00:00',
    '/v3/partner-orders/paginated?updatedSince=yesterday',
    '/v3/partner-orders/paginated?active=yes',
    '/v3/partner-orders/paginated?active=true&active=false',
    '/v3/partner-orders?limit=-1',
    '/v3/partner-orders?limit=1.5',
    '/v3/partner-orders?offset=-1',
    '/v3/partner-orders?offset=x',
    '/v3/partner-orders?active=TRUE',
    '/v3/partner-orders?updatedSince=2026-13-01T00:00:00Z',
  ];
  for (const path of bad) {
    const res = await get(master, path);
    assert.is(res.status, 400, path);
    assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/, path);
    assert.ok(res.body.issues?.length > 0, path);
  }
});

test('legacy: a bare array in the same order; limit and offset; limit=0 is []', async () => {
  const all = await get(master, '/v3/partner-orders');
  assert.is(all.status, 200);
  assert.match(all.headers['content-type'] ?? '', /^application\/json/);
  assert.ok(Array.isArray(all.body));
  assert.equal(ids(all.body), masterScope());
  assert.equal(ids((await get(master, '/v3/partner-orders?limit=3&offset=2')).body), masterScope().slice(2, 5));
  assert.equal((await get(master, '/v3/partner-orders?limit=0')).body, []);
  assert.equal((await get(master, '/v3/partner-orders?offset=100')).body, []);
});

test('updatedAt keeps its milliseconds: both listings, the single poll, the order and updatedSince', async () => {
  const partner = await integrator(app, 'partner');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: partner.accountId,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.3.0',
  });
  const times = {
    early: '2026-01-01T00:00:00.123Z',
    late: '2026-01-01T00:00:00.987Z',
    next: '2026-01-01T00:00:01.001Z',
  };
  const apiIds: Record<string, string> = {};
  for (const [key, updatedAt] of Object.entries(times)) {
    const created = await app.admin.call<{ apiId: string; updatedAt: string }>('jobs.create', {
      brandAccountId: brand.accountId,
      partnerId: partner.accountId,
      status: 'open',
      updatedAt,
      apiId: `ms-${key}-${partner.accountId.slice(0, 8)}`,
    });
    assert.is(created.updatedAt, updatedAt, 'jobs.create answers the exact instant');
    apiIds[key] = created.apiId;
  }
  const expected = [
    [apiIds.next, times.next],
    [apiIds.late, times.late],
    [apiIds.early, times.early],
  ];
  const rows = (items: { jobApiId: string; updatedAt: string }[]) => items.map((i) => [i.jobApiId, i.updatedAt]);
  const paged = await get(partner, '/v3/partner-orders/paginated');
  assert.equal(rows(paged.body.items), expected, 'paginated: exact milliseconds, ordered by them');
  const legacy = await get(partner, '/v3/partner-orders');
  assert.equal(rows(legacy.body), expected, 'legacy: exact milliseconds, ordered by them');
  for (const [key, updatedAt] of Object.entries(times)) {
    const polled = await get(partner, `/v3/poll/job/*/${apiIds[key]}`);
    assert.equal([polled.status, polled.body.updatedAt], [200, updatedAt], `poll ${key}`);
  }
  const since = encodeURIComponent('2026-01-01T00:00:00.500Z');
  assert.equal(
    rows((await get(partner, `/v3/partner-orders/paginated?updatedSince=${since}`)).body.items),
    expected.slice(0, 2),
  );
  assert.equal(rows((await get(partner, `/v3/partner-orders?updatedSince=${since}`)).body), expected.slice(0, 2));
  const exact = encodeURIComponent(times.late);
  assert.equal(
    rows((await get(partner, `/v3/partner-orders/paginated?updatedSince=${exact}`)).body.items),
    expected.slice(0, 2),
    'inclusive to the millisecond',
  );
});

test.run();
