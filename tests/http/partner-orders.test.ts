import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../support/integrators.ts';

type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Who = Awaited<ReturnType<typeof integrator>>;
const test = suite('partner order polling over REST');

let app: App;
let brand: Who, master: Who, childA: Who, childB: Who, ownChild: Who, unrelated: Who, noConfig: Who, orphanChild: Who, defaultShaped: Who;
const jobs: Record<string, string> = {};
const at = (minutes: number) => new Date(Date.UTC(2026, 10, 1, 12, minutes)).toISOString();

test.before(async () => {
  app = await appWithMailbox();
  brand = await integrator(app, 'brand');
  master = await integrator(app, 'partner');
  childA = await integrator(app, 'partner', master.accountId);
  childB = await integrator(app, 'partner', master.accountId);
  ownChild = await integrator(app, 'partner', master.accountId);
  unrelated = await integrator(app, 'partner');
  noConfig = await integrator(app, 'partner');
  const unconfiguredMaster = await integrator(app, 'partner');
  orphanChild = await integrator(app, 'partner', unconfiguredMaster.accountId);
  defaultShaped = await integrator(app, 'partner');
  const config = (who: Who, transformer: string, version: string) =>
    app.admin.call('webhookConfigs.upsert', { accountId: who.accountId, scope: 'partner', transformer, version });
  await config(master, 'partner-format', '1.3.0');
  await config(ownChild, 'partner-format', '1.1.0');
  await config(unrelated, 'partner-format', '1.3.0');
  await config(defaultShaped, 'default', '1.0.0');

  const job = async (key: string, partner: Who | null, minutes: number, status = 'open', apiId?: string) => {
    const created = await app.admin.call<{ apiId: string }>('jobs.create', {
      brandAccountId: brand.accountId, partnerId: partner?.accountId ?? null, status, updatedAt: at(minutes),
      apiId: apiId ?? `${key}-${brand.accountId.slice(0, 8)}`,
    });
    jobs[key] = created.apiId;
  };
  await job('m1', master, 10);
  await job('m2', master, 20, 'completed');
  await job('a1', childA, 30, 'appointment_confirmed');
  await job('a2', childA, 40, 'new');
  await job('b1', childB, 50, 'started');
  await job('o1', ownChild, 60);
  await job('o2', ownChild, 70, 'cancelled');
  await job('u1', unrelated, 80);
  await job('d1', defaultShaped, 90);
  await job('none', null, 100);
  // Two jobs with the same updatedAt: the tie is broken by apiId ascending.
  await job('tieZ', childB, 55, 'open', `zz-tie-${brand.accountId.slice(0, 8)}`);
  await job('tieA', childB, 55, 'open', `aa-tie-${brand.accountId.slice(0, 8)}`);
});

const get = (who: Who, path: string) => app.http.get(path).set('authorization', `Bearer ${who.accessToken}`);
const ids = (items: { jobApiId?: string; orderId?: string }[]) => items.map((i) => i.jobApiId ?? i.orderId);
const masterScope = () => [jobs.o2, jobs.o1, jobs.tieA, jobs.tieZ, jobs.b1, jobs.a2, jobs.a1, jobs.m2, jobs.m1];

test('visibility: a master with its own configuration sees its orders and all its direct children\'s', async () => {
  const res = await get(master, '/v3/partner-orders/paginated');
  assert.is(res.status, 200);
  assert.equal(ids(res.body.items), masterScope());
  assert.is(res.body.total, 9);
});

test('visibility: a child resolved through its master sees the master\'s scope, siblings included', async () => {
  for (const child of [childA, childB]) {
    const res = await get(child, '/v3/partner-orders/paginated');
    assert.equal(ids(res.body.items), masterScope());
  }
});

test('visibility: a child with its own configuration sees only its own orders, in its own version', async () => {
  const res = await get(ownChild, '/v3/partner-orders/paginated');
  assert.equal(ids(res.body.items), [jobs.o2, jobs.o1]);
  assert.ok(res.body.items.every((i: { _v: string }) => i._v === '1.1.0'));
});

test('visibility: an unrelated partner sees only its own; unassigned orders are never listed', async () => {
  const res = await get(unrelated, '/v3/partner-orders/paginated');
  assert.equal(ids(res.body.items), [jobs.u1]);
  const legacy = await get(unrelated, '/v3/partner-orders');
  assert.equal(ids(legacy.body), [jobs.u1]);
  for (const who of [master, childA, ownChild, unrelated]) {
    const all = await get(who, '/v3/partner-orders');
    assert.not.ok(ids(all.body).includes(jobs.none));
  }
});

test('403 without a partner configuration of one\'s own or one\'s master\'s; on every polling path', async () => {
  for (const who of [noConfig, orphanChild]) {
    for (const path of ['/v3/partner-orders/paginated', '/v3/partner-orders', `/v3/poll/job/*/${jobs.m1}`]) {
      const res = await get(who, path);
      assert.is(res.status, 403, path);
      assert.is(res.body.code, 'FORBIDDEN');
      assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
    }
  }
});

test('paginated needs the partner-format transformer (400); the legacy listing does not', async () => {
  const paged = await get(defaultShaped, '/v3/partner-orders/paginated');
  assert.is(paged.status, 400);
  assert.is(paged.body.code, 'BAD_REQUEST');
  const legacy = await get(defaultShaped, '/v3/partner-orders');
  assert.is(legacy.status, 200);
  assert.equal(legacy.body.map((i: { orderId: string }) => i.orderId), [jobs.d1]);
  assert.is(legacy.body[0]._v, '1.0.0');
});

test('401 for a missing token or a brand token', async () => {
  for (const path of ['/v3/partner-orders/paginated', '/v3/partner-orders']) {
    assert.is((await app.http.get(path)).status, 401);
    assert.is((await get(brand, path)).status, 401);
  }
});

test('payload: partner-format 1.3.0 with _eid "polled"', async () => {
  const res = await get(master, '/v3/partner-orders/paginated?pageSize=1');
  assert.equal(Object.keys(res.body.items[0]), ['_eid', '_type', '_v', 'jobApiId', 'gidOrderNumber', 'invoicingEid', 'yourOrderID', 'status',
    'customer', 'shippingAddress', 'products', 'appointmentStart', 'appointmentEnd', 'projectId', 'projectName', 'partnerId', 'updatedAt']);
  assert.equal([res.body.items[0]._eid, res.body.items[0]._type, res.body.items[0].partnerId], ['polled', 'OrderStatusEvent', ownChild.accountId]);
});

test('filters: updatedSince is inclusive; active excludes orders needing no partner action', async () => {
  const since = await get(master, `/v3/partner-orders/paginated?updatedSince=${encodeURIComponent(at(55))}`);
  assert.equal(ids(since.body.items), [jobs.o2, jobs.o1, jobs.tieA, jobs.tieZ]);
  assert.is(since.body.total, 4);
  const offset = await get(master, `/v3/partner-orders/paginated?updatedSince=${encodeURIComponent('2026-11-01T13:55:00+01:00')}`);
  assert.equal(offset.body.total, 4, 'an offset is honoured');
  for (const value of ['true', '1']) {
    const active = await get(master, `/v3/partner-orders/paginated?active=${value}`);
    assert.equal(ids(active.body.items), [jobs.o1, jobs.tieA, jobs.tieZ, jobs.b1, jobs.a1, jobs.m1]);
    assert.is(active.body.total, 6);
  }
  for (const value of ['false', '0']) assert.is((await get(master, `/v3/partner-orders/paginated?active=${value}`)).body.total, 9);
  const both = await get(master, `/v3/partner-orders?active=1&updatedSince=${encodeURIComponent(at(50))}`);
  assert.equal(ids(both.body), [jobs.o1, jobs.tieA, jobs.tieZ, jobs.b1]);
});

test('paging: pages, a page past the end, clamping of pageSize', async () => {
  const p2 = await get(master, '/v3/partner-orders/paginated?page=2&pageSize=4');
  assert.equal({ page: p2.body.page, pageSize: p2.body.pageSize, total: p2.body.total }, { page: 2, pageSize: 4, total: 9 });
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
  const defaults = await get(master, '/v3/partner-orders/paginated');
  assert.equal([defaults.body.page, defaults.body.pageSize], [1, 50]);
  const empty = await get(master, '/v3/partner-orders/paginated?pageSize=&page=');
  assert.equal([empty.body.page, empty.body.pageSize], [1, 50], 'an empty value is an absent one');
  assert.equal(ids((await get(master, '/v3/partner-orders?limit=&offset=')).body), masterScope());
});

test('400 for malformed page, pageSize, limit, offset, updatedSince and active', async () => {
  const bad = [
    '/v3/partner-orders/paginated?page=0', '/v3/partner-orders/paginated?page=1.5', '/v3/partner-orders/paginated?page=abc',
    '/v3/partner-orders/paginated?pageSize=0', '/v3/partner-orders/paginated?pageSize=-1',
    '/v3/partner-orders/paginated?updatedSince=2026-11-01', '/v3/partner-orders/paginated?updatedSince=2026-11-01T12:00:00',
    '/v3/partner-orders/paginated?updatedSince=yesterday', '/v3/partner-orders/paginated?active=yes',
    '/v3/partner-orders/paginated?active=true&active=false',
    '/v3/partner-orders?limit=-1', '/v3/partner-orders?limit=1.5', '/v3/partner-orders?offset=-1', '/v3/partner-orders?offset=x',
    '/v3/partner-orders?active=TRUE', '/v3/partner-orders?updatedSince=2026-13-01T00:00:00Z',
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
  await app.admin.call('webhookConfigs.upsert', { accountId: partner.accountId, scope: 'partner', transformer: 'partner-format', version: '1.3.0' });
  const times = { early: '2026-01-01T00:00:00.123Z', late: '2026-01-01T00:00:00.987Z', next: '2026-01-01T00:00:01.001Z' };
  const apiIds: Record<string, string> = {};
  for (const [key, updatedAt] of Object.entries(times)) {
    const created = await app.admin.call<{ apiId: string; updatedAt: string }>('jobs.create', {
      brandAccountId: brand.accountId, partnerId: partner.accountId, status: 'open', updatedAt, apiId: `ms-${key}-${partner.accountId.slice(0, 8)}`,
    });
    assert.is(created.updatedAt, updatedAt, 'jobs.create answers the exact instant');
    apiIds[key] = created.apiId;
  }
  const expected = [[apiIds.next, times.next], [apiIds.late, times.late], [apiIds.early, times.early]];
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
  assert.equal(rows((await get(partner, `/v3/partner-orders/paginated?updatedSince=${since}`)).body.items), expected.slice(0, 2));
  assert.equal(rows((await get(partner, `/v3/partner-orders?updatedSince=${since}`)).body), expected.slice(0, 2));
  const exact = encodeURIComponent(times.late);
  assert.equal(rows((await get(partner, `/v3/partner-orders/paginated?updatedSince=${exact}`)).body.items), expected.slice(0, 2), 'inclusive to the millisecond');
});

test('poll one order: brand its own, partner its scope, 404 otherwise; version * or explicit', async () => {
  const brandView = await get(brand, `/v3/poll/job/*/${jobs.none}`);
  assert.is(brandView.status, 200);
  assert.equal([brandView.body.orderId, brandView.body._v, brandView.body._eid], [jobs.none, '1.3.0', 'polled']);
  const partnerView = await get(childA, `/v3/poll/job/1.0.0/${jobs.o1}`);
  assert.equal([partnerView.status, partnerView.body.jobApiId, partnerView.body._v], [200, jobs.o1, '1.0.0']);
  assert.is((await get(ownChild, `/v3/poll/job/*/${jobs.o1}`)).body._v, '1.1.0');
  const encoded = await get(ownChild, `/v3/poll/job/%2A/${encodeURIComponent(jobs.o1!)}`);
  assert.equal([encoded.status, encoded.body._v], [200, '1.1.0'], 'path parameters are decoded, as Swagger UI sends them');
  assert.is((await get(ownChild, `/v3/poll/job/*/${jobs.m1}`)).status, 404, 'outside its own scope');
  assert.is((await get(unrelated, `/v3/poll/job/*/${jobs.m1}`)).status, 404);
  assert.is((await get(master, `/v3/poll/job/*/${jobs.none}`)).status, 404, 'unassigned');
  assert.is((await get(master, '/v3/poll/job/*/no-such-order')).status, 404);
  const otherBrand = await integrator(app, 'brand');
  assert.is((await get(otherBrand, `/v3/poll/job/*/${jobs.none}`)).status, 404);
  assert.is((await get(master, `/v3/poll/job/2.0.0/${jobs.m1}`)).status, 400);
});

test.run();
