import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { integrator } from '../../support/integrators.ts';
import {
  app,
  brand,
  childA,
  childB,
  defaultShaped,
  get,
  ids,
  jobs,
  master,
  masterScope,
  noConfig,
  orphanChild,
  ownChild,
  unrelated,
  withPartnerOrders,
} from './support.ts';

// Whose orders a partner sees (a master's scope, a child's, its own), who is refused (403, 400, 401), and the single
// poll.
const test = suite('partner order polling over REST: who sees what');
withPartnerOrders(test);

test("visibility: a master with its own configuration sees its orders and all its direct children's", async () => {
  const res = await get(master, '/v3/partner-orders/paginated');
  assert.is(res.status, 200);
  assert.equal(ids(res.body.items), masterScope());
  assert.is(res.body.total, 9);
});

test("visibility: a child resolved through its master sees the master's scope, siblings included", async () => {
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

test("403 without a partner configuration of one's own or one's master's; on every polling path", async () => {
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
  assert.equal(
    legacy.body.map((i: { orderId: string }) => i.orderId),
    [jobs.d1],
  );
  assert.is(legacy.body[0]._v, '1.0.0');
});

test('401 for a missing token or a brand token', async () => {
  for (const path of ['/v3/partner-orders/paginated', '/v3/partner-orders']) {
    assert.is((await app.http.get(path)).status, 401);
    assert.is((await get(brand, path)).status, 401);
  }
});

test('poll one order: brand its own, partner its scope, 404 otherwise; version * or explicit', async () => {
  const brandView = await get(brand, `/v3/poll/job/*/${jobs.none}`);
  assert.is(brandView.status, 200);
  assert.equal([brandView.body.orderId, brandView.body._v, brandView.body._eid], [jobs.none, '1.3.0', 'polled']);
  const partnerView = await get(childA, `/v3/poll/job/1.0.0/${jobs.o1}`);
  assert.equal([partnerView.status, partnerView.body.jobApiId, partnerView.body._v], [200, jobs.o1, '1.0.0']);
  assert.is((await get(ownChild, `/v3/poll/job/*/${jobs.o1}`)).body._v, '1.1.0');
  const encoded = await get(ownChild, `/v3/poll/job/%2A/${encodeURIComponent(jobs.o1!)}`);
  assert.equal(
    [encoded.status, encoded.body._v],
    [200, '1.1.0'],
    'path parameters are decoded, as Swagger UI sends them',
  );
  assert.is((await get(ownChild, `/v3/poll/job/*/${jobs.m1}`)).status, 404, 'outside its own scope');
  assert.is((await get(unrelated, `/v3/poll/job/*/${jobs.m1}`)).status, 404);
  assert.is((await get(master, `/v3/poll/job/*/${jobs.none}`)).status, 404, 'unassigned');
  assert.is((await get(master, '/v3/poll/job/*/no-such-order')).status, 404);
  const otherBrand = await integrator(app, 'brand');
  assert.is((await get(otherBrand, `/v3/poll/job/*/${jobs.none}`)).status, 404);
  assert.is((await get(master, `/v3/poll/job/2.0.0/${jobs.m1}`)).status, 400);
});

test.run();
