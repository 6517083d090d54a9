import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { snapshotOf } from '../../support/snapshot.ts';
import {
  app,
  brand,
  command,
  eventsOf,
  order,
  otherBrand,
  partner,
  poll,
  run,
  send,
  tag,
  withBrandCommandsApp,
} from './support.ts';

// Who may send a brand command, which envelopes and bodies are refused, and how its result is polled.
const test = suite('brand commands over REST: envelopes and results');
withBrandCommandsApp(test);

test('a partner token is 401; invalid envelopes and bodies are 400 with issues and store nothing; fixed, the same _cid is accepted', async () => {
  const refused = await send(partner, command('RefreshOrder', { orderId: order('refresh') }));
  assert.is(refused.status, 401);
  assert.match(refused.body.detail, 'needs a brand access token');
  const cid = randomUUID();
  // The rows of this suite's accounts only: other suites' work goes on meanwhile (this app's worker delivers their
  // events).
  const ours = () => snapshotOf(app.database, [brand.accountId, otherBrand.accountId, partner.accountId]);
  const before = await ours();
  for (const [body, path] of [
    [command('Nope', { orderId: 'x' }, cid), '_type'],
    [{ ...command('RefreshOrder', { orderId: 'x' }, cid), _v: '2.0.0' }, '_v'],
    [command('RefreshOrder', {}, cid), 'orderId'],
    [command('RefreshOrder', { orderId: 'x', extra: 1 }, cid), 'extra'],
    [command('UpdateCustomer', { orderId: 'x', customer: {} }, cid), 'customer'],
    [command('UpdateCustomer', { orderId: 'x', customer: { email: 'nope' } }, cid), 'customer.email'],
    [command('CreateOrderFromMapping', { orders: [] }, cid), 'orders'],
    [{ ...command('RefreshOrder', { orderId: 'x' }, cid), _metadata: { ref: '1' } }, '_metadata.ref'],
    [{ _v: '1.0.0', _type: 'RefreshOrder', orderId: 'x' }, '_cid'],
  ] as const) {
    const res = await send(brand, body);
    assert.is(res.status, 400, JSON.stringify(body));
    assert.is(res.body.code, 'BAD_REQUEST');
    assert.ok(
      res.body.issues.some((i: { path: string }) => i.path === path),
      `${JSON.stringify(res.body.issues)} lacks ${path}`,
    );
  }
  assert.equal(await ours(), before, 'nothing stored');
  const fixed = await run(brand, command('RefreshOrder', { orderId: order('refresh') }, cid));
  assert.is(fixed._type, 'CommandResultEvent');
  const after = await ours();
  assert.ok(
    ['commands', 'events'].every((table) => after[table] !== before[table]),
    'the snapshot sees what a command stores',
  );
});

test('a _cid that needs encoding in a path is polled by its encoded form', async () => {
  const cid = `refresh ${tag} #1/ä`;
  const result = await run(brand, command('RefreshOrder', { orderId: order('refresh') }, cid));
  assert.is(result._cid, cid);
  assert.is((await poll(brand, cid)).status, 200);
});

test("results: 204 until run, then 200; another account's or an unknown _cid is 404; a partner polls its partner command", async () => {
  assert.is((await poll(brand, `unknown-${tag}`)).status, 404);
  const body = command('RefreshOrder', { orderId: order('refresh') });
  await run(brand, body);
  assert.is((await poll(otherBrand, body._cid)).status, 404);
  assert.is((await poll(partner, body._cid)).status, 404);
  const cid = randomUUID();
  const answer = await app.http
    .post('/v3/commands/partner/appointment')
    .set('authorization', `Bearer ${partner.accessToken}`)
    .send({
      _v: '1.0.0',
      _cid: cid,
      _type: 'SetJobAppointment',
      jobApiId: order('refresh'),
      appointmentStart: '2026-12-01T09:00:00+01:00',
    });
  assert.is(answer.status, 200);
  const result = (await poll(partner, cid)).body;
  assert.equal(
    [result._type, result.commandType, result.result, result._v],
    ['CommandResultEvent', 'SetJobAppointment', { orderId: order('refresh') }, '1.3.0'],
  );
  const stored = (await eventsOf(partner.accountId)).find((e) => e.payload._eid === result._eid);
  assert.is(stored?.type, 'CommandResultEvent', 'recorded in the outbox with the change');
  assert.is((await poll(brand, cid)).status, 404);
});

test.run();
