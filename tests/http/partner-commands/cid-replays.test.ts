import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  APPOINTMENT,
  app,
  appointment,
  brand,
  eventsFor,
  job,
  loner,
  post,
  tag,
  withPartnerCommandsApp,
  YOUR_ORDER_ID,
} from './support.ts';

// A _cid sent again, over either transport or at once, replays the first answer; another body under it is 409, and a
// refused command holds none.
const test = suite('partner commands over REST: _cid replays');
withPartnerCommandsApp(test);

test('over /trpc too, the same _cid and input replay the first answer', async () => {
  const input = appointment({ jobApiId: job.loner1!.apiId });
  const call = () =>
    app.http
      .post('/trpc/partnerCommands.setJobAppointment')
      .set('authorization', `Bearer ${loner.accessToken}`)
      .send(input);
  const [first, again] = [await call(), await call()];
  assert.equal([first.status, again.status], [200, 200], JSON.stringify(again.body));
  assert.equal(again.body.result.data, first.body.result.data);
});

test('one command whatever the transport: sent over REST, replayed over /trpc (offset and key order aside), and back', async () => {
  const body = appointment({ jobApiId: job.loner1!.apiId });
  const rest = await post(loner, APPOINTMENT, body, null);
  assert.is(rest.status, 200);
  const sameInstant = {
    ...Object.fromEntries(Object.entries(body).reverse()),
    appointmentStart: '2026-12-01T08:00:00Z',
    appointmentEnd: '2026-12-01T10:00:00.000Z',
  };
  const rpc = await app.http
    .post('/trpc/partnerCommands.setJobAppointment')
    .set('authorization', `Bearer ${loner.accessToken}`)
    .send(sameInstant);
  assert.is(rpc.status, 200, JSON.stringify(rpc.body));
  assert.equal(rpc.body.result.data, rest.body);
  const later = await app.http
    .post('/trpc/partnerCommands.setJobAppointment')
    .set('authorization', `Bearer ${loner.accessToken}`)
    .send({ ...body, appointmentEnd: '2026-12-01T12:00:00+01:00' });
  assert.is(later.status, 409);

  const first = appointment({ jobApiId: job.loner1!.apiId });
  const viaRpc = await app.http
    .post('/trpc/partnerCommands.setJobAppointment')
    .set('authorization', `Bearer ${loner.accessToken}`)
    .send(first);
  const viaRest = await post(loner, APPOINTMENT, first, null);
  assert.equal([viaRpc.status, viaRest.status], [200, 200]);
  assert.equal(viaRest.body, viaRpc.body.result.data);
  const nested = await post(loner, APPOINTMENT, { ...first, _metadata: { 'ext-ref': 'other' } }, null);
  assert.is(nested.status, 409, 'another _metadata is another command');
});

test('a _cid replayed with a body that differs only inside a nested member is 409, and the first answer stands', async () => {
  const body = appointment({ jobApiId: job.loner1!.apiId }, { _metadata: { 'ext-ref': 'a', 'ext-trace': 't-1' } });
  const first = await post(loner, APPOINTMENT, body, null);
  assert.is(first.status, 200, JSON.stringify(first.body));
  for (const metadata of [
    { 'ext-ref': 'b', 'ext-trace': 't-1' },
    { 'ext-ref': 'a', 'ext-trace': 't-2' },
    { 'ext-trace': 't-1', 'ext-ref': 'A' },
  ]) {
    const other = await post(loner, APPOINTMENT, { ...body, _metadata: metadata }, null);
    assert.equal([other.status, other.body.code], [409, 'CONFLICT'], JSON.stringify(metadata));
  }
  const same = await post(loner, APPOINTMENT, { ...body, _metadata: { 'ext-trace': 't-1', 'ext-ref': 'a' } }, null);
  assert.equal([same.status, same.body], [200, first.body], 'nested key order aside, the same body replays');
  const cid = randomUUID();
  const setId = (metadata: Record<string, string>) => ({
    _v: '1.0.0',
    _cid: cid,
    _type: 'SetJobYourOrderId',
    jobApiId: job.loner1!.apiId,
    yourOrderID: `Y-${tag}`,
    _metadata: metadata,
  });
  assert.is((await post(loner, YOUR_ORDER_ID, setId({ 'ext-ref': '1' }), null)).status, 200);
  const nested = await post(loner, YOUR_ORDER_ID, setId({ 'ext-ref': '2' }), null);
  assert.equal([nested.status, nested.body.code], [409, 'CONFLICT'], 'SetJobYourOrderId likewise');
});

test('20 concurrent requests with one _cid and one body: one change, one set of events, 20 equal answers', async () => {
  const target = job.loner3!.apiId;
  const before = {
    brand: (await eventsFor(brand.accountId, target)).length,
    partner: (await eventsFor(loner.accountId, target)).length,
  };
  const body = appointment({ jobApiId: target });
  const answers = await Promise.all(Array.from({ length: 20 }, () => post(loner, APPOINTMENT, body, null)));
  assert.equal(
    answers.map((a) => a.status),
    Array(20).fill(200),
  );
  for (const a of answers) assert.equal(a.body, answers[0]!.body);
  assert.is((await eventsFor(brand.accountId, target)).length, before.brand + 1);
  assert.is((await eventsFor(loner.accountId, target)).length, before.partner + 1);
  const other = await post(loner, APPOINTMENT, { ...body, appointmentEnd: '2026-12-01T12:00:00+01:00' }, null);
  assert.is(other.status, 409);
  assert.is(other.body.code, 'CONFLICT');
  const reordered = Object.fromEntries(Object.entries(body).reverse());
  const replay = await post(loner, APPOINTMENT, reordered, null);
  assert.equal([replay.status, replay.body], [200, answers[0]!.body], 'key order aside, the same body replays');
});

test('a refused command holds no _cid: fixed and resent, it runs', async () => {
  const cid = randomUUID();
  assert.is((await post(loner, APPOINTMENT, appointment({ jobApiId: 'missing' }, { _cid: cid }), null)).status, 404);
  assert.is(
    (await post(loner, APPOINTMENT, appointment({ jobApiId: job.loner1!.apiId }, { _cid: cid }), null)).status,
    200,
  );
});

test.run();
