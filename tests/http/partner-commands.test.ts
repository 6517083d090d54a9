import { createHmac, randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../support/integrators.ts';

type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Who = Awaited<ReturnType<typeof integrator>>;
const test = suite('partner commands over REST');

const KEY = 'master-signing-key-0123456789';
const APPOINTMENT = '/v3/commands/partner/appointment';
const YOUR_ORDER_ID = '/v3/commands/partner/your-order-id';
let app: App;
let brand: Who, master: Who, child: Who, sibling: Who, loner: Who, stranger: Who;
const job: Record<string, { apiId: string; name: string }> = {};
const tag = randomUUID().slice(0, 8);

test.before(async () => {
  app = await appWithMailbox();
  brand = await integrator(app, 'brand');
  master = await integrator(app, 'partner');
  child = await integrator(app, 'partner', master.accountId);
  sibling = await integrator(app, 'partner', master.accountId);
  loner = await integrator(app, 'partner');
  stranger = await integrator(app, 'partner');
  await app.admin.call('webhookConfigs.upsert', { accountId: master.accountId, scope: 'partner', transformer: 'partner-format', version: '1.3.0', signatureKey: KEY });
  await app.admin.call('webhookConfigs.upsert', { accountId: loner.accountId, scope: 'partner', transformer: 'partner-format', version: '1.1.0' });
  await app.admin.call('webhookConfigs.upsert', { accountId: brand.accountId, scope: 'brand', transformer: 'default', version: '1.1.0' });
  const make = async (key: string, partner: Who, extra: Record<string, unknown> = {}) => {
    const created = await app.admin.call<{ apiId: string; name: string }>('jobs.create', {
      brandAccountId: brand.accountId, partnerId: partner.accountId, apiId: `${key}-${tag}`, status: 'accepted', ...extra,
    });
    job[key] = created;
  };
  await make('child1', child, { invoicingEid: `INV-${tag}`, extPartnerId: `P-${tag}` });
  await make('loner1', loner, { name: `O-SHARED-${tag}` });
  await make('child2', child, { name: `O-SHARED-${tag}` });
  await make('loner2', loner, { invoicingEid: `INV-TWICE-${tag}` });
  await make('loner3', loner, { invoicingEid: `INV-TWICE-${tag}` });
  await make('sibling1', sibling, { name: `O-SIB-${tag}` });
  await make('master1', master, { name: `O-MASTER-${tag}` });
});

const sign = (raw: string, key = KEY) => createHmac('sha256', key).update(raw).digest('hex');
const appointment = (identifier: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobAppointment', ...identifier,
  appointmentStart: '2026-12-01T09:00:00+01:00', appointmentEnd: '2026-12-01T11:00:00+01:00', ...extra,
});
/** Sends exactly these bytes, signed (or with the signature given, or none). */
function post(who: Who, path: string, body: unknown, signature: string | null | 'sign' = 'sign') {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const req = app.http.post(path).set('authorization', `Bearer ${who.accessToken}`).set('content-type', 'application/json');
  if (signature === 'sign') req.set('x-webhook-signature', sign(raw));
  else if (signature !== null) req.set('x-webhook-signature', signature);
  return req.send(raw);
}
const eventsFor = (accountId: string, orderId: string) =>
  app.services.unitOfWork().transaction(async (d) => (await d.events.recentFor(accountId, 500)).filter((e) => e.orderId === orderId));

test('each identifier finds its job; the answer carries the order in the caller\'s shape', async () => {
  const cases: Record<string, string>[] = [
    { jobApiId: job.child1!.apiId }, { invoicingEid: `INV-${tag}` }, { gidOrderNumber: job.child1!.name }, { yourOrderID: `P-${tag}` },
  ];
  for (const identifier of cases) {
    const body = appointment(identifier);
    const res = await post(child, APPOINTMENT, body);
    assert.is(res.status, 200, JSON.stringify([identifier, res.body]));
    assert.equal({ ...res.body, order: undefined }, { _cid: body._cid, _type: 'SetJobAppointment', status: 'succeeded', order: undefined });
    assert.equal([res.body.order.jobApiId, res.body.order.status, res.body.order._v], [job.child1!.apiId, 'appointment_confirmed', '1.3.0']);
    assert.equal([res.body.order.appointmentStart, res.body.order.appointmentEnd], ['2026-12-01T08:00:00.000Z', '2026-12-01T10:00:00.000Z']);
  }
});

test('400 with issues for every body rule, none or two identifiers included; nothing changes', async () => {
  const before = (await eventsFor(brand.accountId, job.child1!.apiId)).length;
  const id = { jobApiId: job.child1!.apiId };
  const bad: [string, string, unknown][] = [
    ['no identifier', APPOINTMENT, appointment({})],
    ['two identifiers', APPOINTMENT, appointment({ ...id, invoicingEid: `INV-${tag}` })],
    ['missing _v', APPOINTMENT, { ...appointment(id), _v: undefined }],
    ['wrong _v', APPOINTMENT, appointment(id, { _v: '2.0.0' })],
    ['missing _cid', APPOINTMENT, { ...appointment(id), _cid: undefined }],
    ['empty _cid', APPOINTMENT, appointment(id, { _cid: '' })],
    ['_type of the other endpoint', APPOINTMENT, appointment(id, { _type: 'SetJobYourOrderId' })],
    ['metadata key without ext-', APPOINTMENT, appointment(id, { _metadata: { trace: 'x' } })],
    ['metadata value not a string', APPOINTMENT, appointment(id, { _metadata: { 'ext-trace': 1 } })],
    ['missing appointmentStart', APPOINTMENT, { ...appointment(id), appointmentStart: undefined }],
    ['appointmentStart without offset', APPOINTMENT, appointment(id, { appointmentStart: '2026-12-01T09:00:00' })],
    ['appointmentStart a date only', APPOINTMENT, appointment(id, { appointmentStart: '2026-12-01' })],
    ['appointmentEnd before start', APPOINTMENT, appointment(id, { appointmentEnd: '2026-12-01T07:59:00Z' })],
    // A rule of the body, judged before the job is looked for: 400, not 404.
    ['appointmentEnd before start, of no job', APPOINTMENT, appointment({ jobApiId: 'no-such-job' }, { appointmentEnd: '2026-12-01T07:59:00Z' })],
    ['unknown field', APPOINTMENT, appointment(id, { color: 'red' })],
    ['missing yourOrderID', YOUR_ORDER_ID, { _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobYourOrderId', ...id }],
    ['yourOrderID as identifier only', YOUR_ORDER_ID, { _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobYourOrderId', yourOrderID: 'X' }],
    ['two identifiers (your-order-id)', YOUR_ORDER_ID, { _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobYourOrderId', ...id, gidOrderNumber: 'O', yourOrderID: 'X' }],
  ];
  for (const [label, path, body] of bad) {
    const res = await post(child, path, body);
    assert.is(res.status, 400, `${label}: ${JSON.stringify(res.body)}`);
    assert.is(res.body.code, 'BAD_REQUEST', label);
    assert.ok(res.body.issues?.length > 0, `${label}: ${JSON.stringify(res.body)}`);
  }
  assert.is((await eventsFor(brand.accountId, job.child1!.apiId)).length, before);
});

test('signature: missing, wrong, or over re-serialised JSON → 401; lower- and upper-case hex → 200', async () => {
  const body = appointment({ jobApiId: job.child1!.apiId });
  const raw = JSON.stringify(body, null, 2); // the bytes on the wire
  assert.is((await post(child, APPOINTMENT, raw, null)).status, 401, 'missing');
  assert.is((await post(child, APPOINTMENT, raw, sign(raw, 'another-key-0123456789'))).status, 401, 'wrong key');
  assert.is((await post(child, APPOINTMENT, raw, sign(JSON.stringify(body)))).status, 401, 're-serialised');
  assert.is((await post(child, APPOINTMENT, raw, 'zz')).status, 401, 'garbage');
  assert.is((await post(child, APPOINTMENT, raw, sign(raw).toUpperCase())).status, 200, 'upper-case hex');
  assert.is((await post(child, APPOINTMENT, appointment({ jobApiId: job.child1!.apiId }), 'sign')).status, 200, 'lower-case hex');
  const res = await post(master, APPOINTMENT, raw, null);
  assert.is(res.body.code, 'UNAUTHORIZED');
});

test('token, then signature, then body: bad signature with a bad body → 401; good signature with an unknown job → 404', async () => {
  assert.is((await post(child, APPOINTMENT, '{"not":"a command"}', 'deadbeef')).status, 401);
  assert.is((await post(child, APPOINTMENT, '{broken json', 'deadbeef')).status, 401, 'malformed JSON, bad signature');
  const anonymous = await app.http.post(APPOINTMENT).set('content-type', 'application/json').send('{broken json');
  assert.is(anonymous.status, 401, 'malformed JSON, no token');
  const malformed = await post(child, APPOINTMENT, '{broken json', 'sign');
  assert.equal([malformed.status, malformed.body.code], [400, 'PARSE_ERROR'], 'malformed JSON, good signature');
  const res = await post(child, APPOINTMENT, appointment({ jobApiId: 'no-such-job' }));
  assert.is(res.status, 404);
  assert.is(res.body.code, 'NOT_FOUND');
});

test('without a key the signature header is optional', async () => {
  const res = await post(loner, APPOINTMENT, appointment({ jobApiId: job.loner1!.apiId }), null);
  assert.is(res.status, 200);
  assert.is(res.body.order._v, '1.1.0', 'rendered in the caller\'s own configuration');
});

test('ownership: the master acts on its child\'s job; an unrelated partner is 403; a brand token is 401', async () => {
  assert.is((await post(master, APPOINTMENT, appointment({ jobApiId: job.child1!.apiId }))).status, 200);
  const refused = await post(stranger, APPOINTMENT, appointment({ jobApiId: job.child1!.apiId }), null);
  assert.is(refused.status, 403);
  assert.is(refused.body.code, 'FORBIDDEN');
  assert.is((await post(brand, APPOINTMENT, appointment({ jobApiId: job.child1!.apiId }), null)).status, 401);
  assert.is((await post(child, APPOINTMENT, appointment({ jobApiId: job.loner1!.apiId }))).status, 403, 'a sibling\'s job from another family');
});

test('ownership: a child may not command its sibling\'s job nor its master\'s own job (403, nothing changes), on both endpoints', async () => {
  const yourOrderId = (identifier: Record<string, string>) => ({ _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobYourOrderId', ...identifier, yourOrderID: `X-${randomUUID().slice(0, 8)}` });
  const targets = [['sibling', job.sibling1!], ['master', job.master1!]] as const;
  for (const [whose, target] of targets) {
    const before = (await eventsFor(brand.accountId, target.apiId)).length;
    for (const identifier of [{ jobApiId: target.apiId }, { gidOrderNumber: target.name }] as Record<string, string>[]) {
      for (const [path, body] of [[APPOINTMENT, appointment(identifier)], [YOUR_ORDER_ID, yourOrderId(identifier)]] as const) {
        const res = await post(child, path, body);
        assert.is(res.status, 403, `child on its ${whose}'s job via ${path} ${JSON.stringify(identifier)}: ${JSON.stringify(res.body)}`);
        assert.is(res.body.code, 'FORBIDDEN');
      }
    }
    assert.is((await eventsFor(brand.accountId, target.apiId)).length, before, `the ${whose}'s job did not change`);
  }
  // The sibling is refused the child's job likewise, and the master may still command its children's jobs and its own.
  assert.is((await post(sibling, YOUR_ORDER_ID, yourOrderId({ jobApiId: job.child1!.apiId }))).status, 403);
  assert.is((await post(master, APPOINTMENT, appointment({ jobApiId: job.sibling1!.apiId }))).status, 200);
  assert.is((await post(master, YOUR_ORDER_ID, yourOrderId({ jobApiId: job.master1!.apiId }))).status, 200);
});

test('several matches: the caller\'s own is taken; several of the caller\'s → 409', async () => {
  const shared = await post(loner, APPOINTMENT, appointment({ gidOrderNumber: `O-SHARED-${tag}` }), null);
  assert.is(shared.status, 200);
  assert.is(shared.body.order.jobApiId, job.loner1!.apiId);
  const mine = await post(child, APPOINTMENT, appointment({ gidOrderNumber: `O-SHARED-${tag}` }));
  assert.is(mine.body.order.jobApiId, job.child2!.apiId);
  const twice = await post(loner, APPOINTMENT, appointment({ invoicingEid: `INV-TWICE-${tag}` }), null);
  assert.is(twice.status, 409);
});

test('other tenants\' jobs with the same identifier neither hide the caller\'s job nor count against it', async () => {
  const value = `DUP-${randomUUID().slice(0, 8)}`;
  for (let i = 0; i < 3; i++) await app.admin.call('jobs.create', { brandAccountId: brand.accountId, partnerId: stranger.accountId, extPartnerId: value });
  const mine = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId, partnerId: loner.accountId, extPartnerId: value });
  const res = await post(loner, APPOINTMENT, appointment({ yourOrderID: value }), null);
  assert.equal([res.status, res.body.order?.jobApiId], [200, mine.apiId]);
});

test('over /trpc, a partner command is signed like over REST: the exact bytes sent, a wrong or missing signature is 401', async () => {
  const rpc = (raw: string, signature: string | null) => {
    const req = app.http.post('/trpc/partnerCommands.setJobAppointment').set('authorization', `Bearer ${child.accessToken}`).set('content-type', 'application/json');
    return (signature === null ? req : req.set('x-webhook-signature', signature)).send(raw);
  };
  const raw = `{ "_v": "1.0.0", "_cid": "${randomUUID()}", "_type": "SetJobAppointment", "jobApiId": "${job.child1!.apiId}",
    "appointmentStart": "2026-12-01T09:00:00+01:00", "appointmentEnd": "2026-12-01T11:00:00+01:00" }`;
  for (const [signature, label] of [[null, 'missing'], ['0'.repeat(64), 'wrong'], [sign(JSON.stringify(JSON.parse(raw))), 'over other bytes']] as const) {
    const refused = await rpc(raw, signature);
    assert.equal([refused.status, refused.body.error?.data?.code], [401, 'UNAUTHORIZED'], label);
  }
  const signed = await rpc(raw, sign(raw));
  assert.is(signed.status, 200, JSON.stringify(signed.body));
  assert.is(signed.body.result.data.status, 'succeeded');
  const malformed = await rpc('{"_v": ', sign('{"_v": '));
  assert.equal([malformed.status, malformed.body.error?.data?.code], [400, 'PARSE_ERROR'], 'a signed body that is not JSON keeps tRPC\'s error shape');
  const huge = `{"_v":"1.0.0","pad":"${'x'.repeat(1024 * 1024)}"}`;
  const tooLarge = await rpc(huge, sign(huge));
  assert.equal([tooLarge.status, tooLarge.body.error?.data?.code, tooLarge.body.error?.data?.path], [413, 'PAYLOAD_TOO_LARGE', 'partnerCommands.setJobAppointment'],
    'a body over 1 MiB keeps tRPC\'s error shape too');
  assert.match(tooLarge.headers['content-type'] ?? '', /^application\/json/);
});

test('over /trpc too, the same _cid and input replay the first answer', async () => {
  const input = appointment({ jobApiId: job.loner1!.apiId });
  const call = () => app.http.post('/trpc/partnerCommands.setJobAppointment').set('authorization', `Bearer ${loner.accessToken}`).send(input);
  const [first, again] = [await call(), await call()];
  assert.equal([first.status, again.status], [200, 200], JSON.stringify(again.body));
  assert.equal(again.body.result.data, first.body.result.data);
});

test('one command whatever the transport: sent over REST, replayed over /trpc (offset and key order aside), and back', async () => {
  const body = appointment({ jobApiId: job.loner1!.apiId });
  const rest = await post(loner, APPOINTMENT, body, null);
  assert.is(rest.status, 200);
  const sameInstant = { ...Object.fromEntries(Object.entries(body).reverse()), appointmentStart: '2026-12-01T08:00:00Z', appointmentEnd: '2026-12-01T10:00:00.000Z' };
  const rpc = await app.http.post('/trpc/partnerCommands.setJobAppointment').set('authorization', `Bearer ${loner.accessToken}`).send(sameInstant);
  assert.is(rpc.status, 200, JSON.stringify(rpc.body));
  assert.equal(rpc.body.result.data, rest.body);
  const later = await app.http.post('/trpc/partnerCommands.setJobAppointment').set('authorization', `Bearer ${loner.accessToken}`)
    .send({ ...body, appointmentEnd: '2026-12-01T12:00:00+01:00' });
  assert.is(later.status, 409);

  const first = appointment({ jobApiId: job.loner1!.apiId });
  const viaRpc = await app.http.post('/trpc/partnerCommands.setJobAppointment').set('authorization', `Bearer ${loner.accessToken}`).send(first);
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
  for (const metadata of [{ 'ext-ref': 'b', 'ext-trace': 't-1' }, { 'ext-ref': 'a', 'ext-trace': 't-2' }, { 'ext-trace': 't-1', 'ext-ref': 'A' }]) {
    const other = await post(loner, APPOINTMENT, { ...body, _metadata: metadata }, null);
    assert.equal([other.status, other.body.code], [409, 'CONFLICT'], JSON.stringify(metadata));
  }
  const same = await post(loner, APPOINTMENT, { ...body, _metadata: { 'ext-trace': 't-1', 'ext-ref': 'a' } }, null);
  assert.equal([same.status, same.body], [200, first.body], 'nested key order aside, the same body replays');
  const cid = randomUUID();
  const setId = (metadata: Record<string, string>) => ({ _v: '1.0.0', _cid: cid, _type: 'SetJobYourOrderId', jobApiId: job.loner1!.apiId, yourOrderID: `Y-${tag}`, _metadata: metadata });
  assert.is((await post(loner, YOUR_ORDER_ID, setId({ 'ext-ref': '1' }), null)).status, 200);
  const nested = await post(loner, YOUR_ORDER_ID, setId({ 'ext-ref': '2' }), null);
  assert.equal([nested.status, nested.body.code], [409, 'CONFLICT'], 'SetJobYourOrderId likewise');
});

test('20 concurrent requests with one _cid and one body: one change, one set of events, 20 equal answers', async () => {
  const target = job.loner3!.apiId;
  const before = { brand: (await eventsFor(brand.accountId, target)).length, partner: (await eventsFor(loner.accountId, target)).length };
  const body = appointment({ jobApiId: target });
  const answers = await Promise.all(Array.from({ length: 20 }, () => post(loner, APPOINTMENT, body, null)));
  assert.equal(answers.map((a) => a.status), Array(20).fill(200));
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
  assert.is((await post(loner, APPOINTMENT, appointment({ jobApiId: job.loner1!.apiId }, { _cid: cid }), null)).status, 200);
});

test('the events stored carry the right _type, _v and shape for each receiver', async () => {
  const body = appointment({ jobApiId: job.child1!.apiId });
  await post(child, APPOINTMENT, body);
  const [toBrand] = await eventsFor(brand.accountId, job.child1!.apiId);
  const [toChild] = await eventsFor(child.accountId, job.child1!.apiId);
  assert.equal([toBrand!.type, toBrand!.payload._type, toBrand!.payload._v, toBrand!.payload.orderId, toBrand!.payload.status],
    ['OrderStatusEvent', 'OrderStatusEvent', '1.1.0', job.child1!.apiId, 'appointment_confirmed']);
  assert.ok('projectId' in toBrand!.payload && !('updatedAt' in toBrand!.payload), 'default 1.1.0');
  assert.equal([toChild!.payload._v, toChild!.payload.jobApiId, toChild!.payload.partnerId], ['1.3.0', job.child1!.apiId, child.accountId]);
  assert.is(toChild!.payload._eid, toChild!.id);
});

test('SetJobYourOrderId keeps the status; the new value is a lookup key for SetJobAppointment afterwards', async () => {
  await app.admin.call('jobs.setStatus', { apiId: job.child2!.apiId, status: 'started' });
  const value = `MY-${randomUUID().slice(0, 8)}`;
  const res = await post(child, YOUR_ORDER_ID, { _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobYourOrderId', jobApiId: job.child2!.apiId, yourOrderID: value });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal([res.body.order.status, res.body.order.yourOrderID], ['started', value]);
  const next = await post(child, APPOINTMENT, appointment({ yourOrderID: value }));
  assert.equal([next.status, next.body.order.jobApiId], [200, job.child2!.apiId]);
});

test.run();
