import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  APPOINTMENT,
  app,
  appointment,
  brand,
  child,
  eventsFor,
  job,
  loner,
  master,
  post,
  sign,
  tag,
  withPartnerCommandsApp,
  YOUR_ORDER_ID,
} from './support.ts';

// Which bodies are refused (400 with issues) and how a partner command is signed, over REST and over /trpc; the
// token is checked first, then the signature, then the body.
const test = suite('partner commands over REST: bodies and signatures');
withPartnerCommandsApp(test);

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
    [
      'appointmentEnd before start, of no job',
      APPOINTMENT,
      appointment({ jobApiId: 'no-such-job' }, { appointmentEnd: '2026-12-01T07:59:00Z' }),
    ],
    ['unknown field', APPOINTMENT, appointment(id, { color: 'red' })],
    ['missing yourOrderID', YOUR_ORDER_ID, { _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobYourOrderId', ...id }],
    [
      'yourOrderID as identifier only',
      YOUR_ORDER_ID,
      { _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobYourOrderId', yourOrderID: 'X' },
    ],
    [
      'two identifiers (your-order-id)',
      YOUR_ORDER_ID,
      { _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobYourOrderId', ...id, gidOrderNumber: 'O', yourOrderID: 'X' },
    ],
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
  assert.is(
    (await post(child, APPOINTMENT, appointment({ jobApiId: job.child1!.apiId }), 'sign')).status,
    200,
    'lower-case hex',
  );
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
  // Longer than any stored apiId, it names nothing all the same (CONTRACT §3): 404, not 400.
  const long = await post(child, APPOINTMENT, appointment({ jobApiId: 'j'.repeat(300) }));
  assert.equal([long.status, long.body.code], [404, 'NOT_FOUND']);
});

test('without a key the signature header is optional', async () => {
  const res = await post(loner, APPOINTMENT, appointment({ jobApiId: job.loner1!.apiId }), null);
  assert.is(res.status, 200);
  assert.is(res.body.order._v, '1.1.0', "rendered in the caller's own configuration");
});

test('over /trpc, a partner command is signed like over REST: the exact bytes sent, a wrong or missing signature is 401', async () => {
  const rpc = (raw: string, signature: string | null) => {
    const req = app.http
      .post('/trpc/partnerCommands.setJobAppointment')
      .set('authorization', `Bearer ${child.accessToken}`)
      .set('content-type', 'application/json');
    return (signature === null ? req : req.set('x-webhook-signature', signature)).send(raw);
  };
  const raw = `{ "_v": "1.0.0", "_cid": "${randomUUID()}", "_type": "SetJobAppointment", "jobApiId": "${job.child1!.apiId}",
    "appointmentStart": "2026-12-01T09:00:00+01:00", "appointmentEnd": "2026-12-01T11:00:00+01:00" }`;
  for (const [signature, label] of [
    [null, 'missing'],
    ['0'.repeat(64), 'wrong'],
    [sign(JSON.stringify(JSON.parse(raw))), 'over other bytes'],
  ] as const) {
    const refused = await rpc(raw, signature);
    assert.equal([refused.status, refused.body.error?.data?.code], [401, 'UNAUTHORIZED'], label);
  }
  const signed = await rpc(raw, sign(raw));
  assert.is(signed.status, 200, JSON.stringify(signed.body));
  assert.is(signed.body.result.data.status, 'succeeded');
  const malformed = await rpc('{"_v": ', sign('{"_v": '));
  assert.equal(
    [malformed.status, malformed.body.error?.data?.code],
    [400, 'PARSE_ERROR'],
    "a signed body that is not JSON keeps tRPC's error shape",
  );
  const huge = `{"_v":"1.0.0","pad":"${'x'.repeat(1024 * 1024)}"}`;
  const tooLarge = await rpc(huge, sign(huge));
  assert.equal(
    [tooLarge.status, tooLarge.body.error?.data?.code, tooLarge.body.error?.data?.path],
    [413, 'PAYLOAD_TOO_LARGE', 'partnerCommands.setJobAppointment'],
    "a body over 1 MiB keeps tRPC's error shape too",
  );
  assert.match(tooLarge.headers['content-type'] ?? '', /^application\/json/);
});

test.run();
