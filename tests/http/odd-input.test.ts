import { createHmac } from 'node:crypto';
import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_BODY_BYTES } from '../../server/http/json-body.ts';
import { ADMIN_TOKEN, listening } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { sharedDatabase } from '../support/shared.ts';
import { snapshot } from '../support/snapshot.ts';

// Input that no operation can take is the caller's mistake: a 4xx with a clear problem (or tRPC's error shape at
// /trpc), never a 5xx, and it changes nothing (CONTRACT §3). Each kind is sent where it used to fail.
const test = suite('odd input: always a 4xx, and nothing changes');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Who = Awaited<ReturnType<typeof integrator>>;
let app: App;
let brand: Who;
let partner: Who;
let signed: Who;
let jobApiId: string;
const KEY = 'odd-input-signing-key-0123';
const ADMIN = `Bearer ${ADMIN_TOKEN}`;
const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

test.before(async () => {
  app = await appWithMailbox();
  brand = await integrator(app, 'brand');
  partner = await integrator(app, 'partner');
  signed = await integrator(app, 'partner');
  await app.admin.call('webhookConfigs.upsert', { accountId: partner.accountId, scope: 'partner', url: null, transformer: 'partner-format', version: '1.3.0' });
  await app.admin.call('webhookConfigs.upsert', { accountId: signed.accountId, scope: 'partner', url: null, transformer: 'partner-format', version: '1.3.0', signatureKey: KEY });
  jobApiId = (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId, partnerId: partner.accountId, status: 'accepted' })).apiId;
});

/** Runs the requests and asserts that no table changed meanwhile. */
async function unchanged(work: () => Promise<void>) {
  const database = await sharedDatabase();
  const before = await snapshot(database);
  await work();
  await app.drainDeferred();
  assert.equal(await snapshot(database), before, 'nothing changed');
}

const rawPost = (path: string, body: string, token?: string) => {
  const req = app.http.post(path).set('content-type', 'application/json');
  return (token ? req.set('authorization', `Bearer ${token}`) : req).send(body);
};

function assertProblem(res: { status: number; body: Record<string, unknown>; headers: Record<string, string> }, status: number, code: string, detail?: RegExp) {
  assert.is(res.status, status, JSON.stringify(res.body));
  assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
  assert.is(res.body.code, code);
  if (detail) assert.match(String(res.body.detail), detail);
}

function assertTrpcError(res: { status: number; body: Record<string, unknown> }, status: number, code: string) {
  assert.is(res.status, status, JSON.stringify(res.body));
  const error = res.body.error as { data: { code: string; httpStatus: number } };
  assert.equal([error.data.code, error.data.httpStatus], [code, status]);
}

test('JSON nested deeper than 64 levels is 400 before anything walks it, on both faces, with or without a token', async () => {
  await unchanged(async () => {
    const deep = await rawPost('/v3/auth/login', `{"email":${nested(5000)}}`);
    assertProblem(deep, 400, 'BAD_REQUEST', /deeper than 64 levels/);
    // 64 levels in all (the object and 63 arrays) are read, and judged by the schema.
    const deepest = await rawPost('/v3/auth/login', `{"email":${nested(63)}}`);
    assertProblem(deepest, 400, 'BAD_REQUEST', /not valid/);
    assertProblem(await rawPost('/v3/auth/login', `{"email":${nested(64)}}`), 400, 'BAD_REQUEST', /deeper than 64 levels/);
    // The checks before the body come first: no token is 401, a bad signature 401, only then the depth.
    const command = `{"_v":"1.0.0","_cid":"deep-1","_type":"SetJobAppointment","jobApiId":${nested(5000)}}`;
    assert.is((await rawPost('/v3/commands/partner/appointment', command)).status, 401);
    assert.is((await rawPost('/v3/commands/partner/appointment', command, signed.accessToken).set('x-webhook-signature', 'bad')).status, 401);
    const sig = createHmac('sha256', KEY).update(command).digest('hex');
    assertProblem(await rawPost('/v3/commands/partner/appointment', command, signed.accessToken).set('x-webhook-signature', sig), 400, 'BAD_REQUEST', /deeper/);
    assertProblem(await rawPost('/v3/commands', `{"_v":"1.0.0","_cid":"deep-2","_type":"RefreshOrder","orderId":${nested(5000)}}`, brand.accessToken), 400, 'BAD_REQUEST', /deeper/);
    const rpc = await app.http.post('/trpc/admin.accounts.create').set('authorization', ADMIN).set('content-type', 'application/json').send(`{"name":${nested(5000)},"role":"brand"}`);
    assertTrpcError(rpc, 400, 'BAD_REQUEST');
    const query = await app.http.get(`/trpc/admin.deliveries.list?input=${encodeURIComponent(`{"accountId":${nested(100)}}`)}`).set('authorization', ADMIN);
    assertTrpcError(query, 400, 'BAD_REQUEST');
  });
});

test('well-formed JSON that is not an object is 400 BAD_REQUEST, not PARSE_ERROR; malformed JSON stays PARSE_ERROR', async () => {
  await unchanged(async () => {
    for (const body of ['[]', '"text"', '42', 'null', 'true']) {
      assertProblem(await rawPost('/v3/auth/login', body), 400, 'BAD_REQUEST', /must be a JSON object/);
      assertProblem(await rawPost('/v3/auth/access-token', body, partner.refreshToken), 400, 'BAD_REQUEST', /must be a JSON object/);
      assertProblem(await rawPost('/v3/commands', body, brand.accessToken), 400, 'BAD_REQUEST', /must be a JSON object/);
      const put = await app.http.put('/v3/webhook-config').set('authorization', `Bearer ${partner.accessToken}`).set('content-type', 'application/json').send(body);
      assertProblem(put, 400, 'BAD_REQUEST', /must be a JSON object/);
      assertTrpcError(await app.http.post('/trpc/admin.accounts.create').set('authorization', ADMIN).set('content-type', 'application/json').send(body), 400, 'BAD_REQUEST');
    }
    assertProblem(await rawPost('/v3/auth/login', '{"email":'), 400, 'PARSE_ERROR', /not well-formed JSON/);
  });
});

test('a media type that is not exactly application/json is 415; parameters aside, it is', async () => {
  const jsonx = await app.http.post('/v3/auth/login').set('content-type', 'application/jsonx').send('{"email":"a@example.com"}');
  assertProblem(jsonx, 415, 'UNSUPPORTED_MEDIA_TYPE', /application\/jsonx/);
  const charset = await app.http.post('/v3/auth/login').set('content-type', 'application/json; charset=utf-8').send('{"email":"a@example.com"}');
  assert.is(charset.status, 200);
});

test('a path escape that is not UTF-8 is 400 naming its parameter, not "the body could not be read"', async () => {
  for (const [path, name] of [['/v3/commands/%FF', 'cid'], ['/v3/poll/job/*/ab%E9cd', 'orderId'], ['/v3/poll/job/%C0/x', 'version']] as const) {
    const res = await app.http.get(path).set('authorization', `Bearer ${brand.accessToken}`);
    assertProblem(res, 400, 'BAD_REQUEST', /percent-encoded UTF-8/);
    assert.equal((res.body.issues as { path: string }[]).map((i) => i.path), [name], path);
  }
  const redeliver = await app.http.post('/v3/webhook-deliveries/%FF/redeliver').set('authorization', `Bearer ${brand.accessToken}`).send({});
  assert.equal([redeliver.status, (redeliver.body.issues as { path: string }[])[0]?.path], [400, 'id']);
});

const NUL = 'a\u0000b';
const LONE = 'a\ud800b';

test('U+0000 or an unpaired surrogate anywhere is 400 naming where it is, never a 5xx or a 503, and changes nothing', async () => {
  const issuePaths = (res: { body: Record<string, unknown> }) => ((res.body.issues ?? (res.body.error as { data?: { issues?: unknown } })?.data?.issues ?? []) as { path: string }[]).map((i) => i.path);
  const brandPost = (body: unknown) => app.http.post('/v3/commands').set('authorization', `Bearer ${brand.accessToken}`).send(body as object);
  const envelope = { _v: '1.0.0', _cid: 'odd-cid-1' };
  await unchanged(async () => {
    for (const bad of [NUL, LONE]) {
      const cases: [Promise<{ status: number; body: Record<string, unknown> }>, string][] = [
        [app.http.post('/v3/auth/login').send({ email: `x${bad}@example.com` }), 'email'],
        [brandPost({ ...envelope, _cid: bad, _type: 'RefreshOrder', orderId: jobApiId }), '_cid'],
        [brandPost({ ...envelope, _type: 'UpdateCustomer', orderId: jobApiId, customer: { firstName: bad } }), 'customer.firstName'],
        [brandPost({ ...envelope, _type: 'RefreshOrder', orderId: jobApiId, _metadata: { 'ext-ref': bad } }), '_metadata.ext-ref'],
        [brandPost({ ...envelope, _type: 'UpdateOrderExternalId', orderId: bad, externalId: 'e' }), 'orderId'],
        [app.http.post('/v3/commands/partner/your-order-id').set('authorization', `Bearer ${partner.accessToken}`)
          .send({ ...envelope, _type: 'SetJobYourOrderId', jobApiId, yourOrderID: bad }), 'yourOrderID'],
        [app.http.put('/v3/webhook-config').set('authorization', `Bearer ${partner.accessToken}`)
          .send({ url: 'https://hooks.example.com/x', transformer: 'partner-format', version: '1.3.0', signatureKey: `0123456789abcdef${bad}` }), 'signatureKey'],
        [app.http.get(`/v3/poll/job/*/${encodeURIComponent(NUL)}`).set('authorization', `Bearer ${partner.accessToken}`), 'orderId'],
        [app.http.get('/v3/commands/%00').set('authorization', `Bearer ${brand.accessToken}`), 'cid'],
        [app.http.get('/v3/partner-orders/paginated?updatedSince=%00').set('authorization', `Bearer ${partner.accessToken}`), 'updatedSince'],
        [app.http.post('/trpc/admin.accounts.create').set('authorization', ADMIN).send({ name: bad, role: 'brand' }), 'name'],
        [app.http.post('/trpc/admin.contacts.create').set('authorization', ADMIN).send({ accountId: brand.accountId, email: `y${bad}@example.com` }), 'email'],
      ];
      for (const [pending, path] of cases) {
        const res = await pending;
        assert.is(res.status, 400, `${path}: ${JSON.stringify(res.body)}`);
        assert.ok(issuePaths(res).includes(path), `${path}: ${JSON.stringify(res.body)}`);
      }
    }
  });
});

// JSON.stringify writes a lone surrogate as the escape `\udc00`, and so does this raw text: the server's JSON.parse
// makes it a lone low surrogate (UTF-8 bytes could not carry one). The tests above send only lone high surrogates.
test('a lone low surrogate (\\udc00) sent as a JSON escape is 400 naming where it is, on both faces, and changes nothing', async () => {
  const LOW = '\\udc00';
  assert.is(JSON.parse(`"${LOW}"`), '\udc00', 'the text carries the escape of a lone low surrogate');
  const command = (cid: string, firstName: string) =>
    `{"_v":"1.0.0","_cid":"${cid}","_type":"UpdateCustomer","orderId":"${jobApiId}","customer":{"firstName":"${firstName}"}}`;
  await unchanged(async () => {
    for (const [res, path] of [
      [await rawPost('/v3/auth/login', `{"email":"x${LOW}@example.com"}`), 'email'],
      [await rawPost('/v3/commands', command('odd-low-1', `a${LOW}b`), brand.accessToken), 'customer.firstName'],
      [await rawPost('/v3/commands', command(`odd-low-${LOW}`, 'Ann'), brand.accessToken), '_cid'],
    ] as const) {
      assertProblem(res, 400, 'BAD_REQUEST', /not valid/);
      assert.ok((res.body.issues as { path: string; message: string }[]).some((i) => i.path === path && /unpaired surrogate/.test(i.message)),
        `${path}: ${JSON.stringify(res.body)}`);
    }
    const rpc = await app.http.post('/trpc/admin.accounts.create').set('authorization', ADMIN).set('content-type', 'application/json')
      .send(`{"name":"${LOW}","role":"brand"}`);
    assertTrpcError(rpc, 400, 'BAD_REQUEST');
  });
});

test('a member the operation does not define is 400 naming it, on every body, and nothing happens', async () => {
  const before = (await app.http.get('/v3/webhook-config').set('authorization', `Bearer ${partner.accessToken}`)).body;
  await unchanged(async () => {
    const cases: [Promise<{ status: number; body: Record<string, unknown> }>, string][] = [
      [app.http.put('/v3/webhook-config').set('authorization', `Bearer ${partner.accessToken}`)
        .send({ url: 'https://hooks.example.com/x', transformer: 'partner-format', version: '1.3.0', enable: false }), 'enable'],
      [app.http.post('/v3/auth/access-token').set('authorization', `Bearer ${partner.refreshToken}`).send({ expiresAfter: 60 }), 'expiresAfter'],
      [app.http.post('/v3/webhook-deliveries/redeliver-failed').set('authorization', `Bearer ${brand.accessToken}`)
        .send({ since: '2026-01-01T00:00:00Z', dryRun: true }), 'dryRun'],
      [app.http.post('/v3/auth/login').send({ email: 'someone@example.com', password: 'x' }), 'password'],
      [app.http.post('/v3/webhook-config/test').set('authorization', `Bearer ${partner.accessToken}`).send({ verbose: true }), 'verbose'],
      [app.http.post('/v3/commands').set('authorization', `Bearer ${brand.accessToken}`)
        .send({ _v: '1.0.0', _cid: 'odd-unknown-1', _type: 'RefreshOrder', orderId: jobApiId, priority: 'high' }), 'priority'],
      [app.http.post('/trpc/auth.accessToken').set('authorization', `Bearer ${partner.refreshToken}`).send({ expiresAfter: 60 }), 'expiresAfter'],
      [app.http.post('/trpc/admin.accounts.create').set('authorization', ADMIN).send({ name: 'n', role: 'brand', region: 'eu' }), 'region'],
    ];
    for (const [pending, member] of cases) {
      const res = await pending;
      assert.is(res.status, 400, `${member}: ${JSON.stringify(res.body)}`);
      const issues = (res.body.issues ?? (res.body.error as { data: { issues: unknown } }).data.issues) as { path: string; message: string }[];
      assert.ok(issues.some((i) => i.path === member), `${member}: ${JSON.stringify(issues)}`);
    }
  });
  const after = (await app.http.get('/v3/webhook-config').set('authorization', `Bearer ${partner.accessToken}`)).body;
  assert.equal(after, before, 'the configuration stayed as it was');
});

test('names of Object.prototype, a member named __proto__, and a charset other than UTF-8 are refused like any odd input', async () => {
  await unchanged(async () => {
    for (const type of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      const rest = await rawPost('/v3/commands', JSON.stringify({ _v: '1.0.0', _cid: `proto-${type}`, _type: type, orderId: jobApiId }), brand.accessToken);
      assertProblem(rest, 400, 'BAD_REQUEST');
      const rpc = await app.http.post('/trpc/commands.send').set('authorization', `Bearer ${brand.accessToken}`).set('content-type', 'application/json')
        .send(JSON.stringify({ _v: '1.0.0', _cid: `proto-${type}`, _type: type, orderId: jobApiId }));
      assertTrpcError(rpc, 400, 'BAD_REQUEST');
    }
    // Parsed, a __proto__ member would become the prototype of a copy and slip past the strict checks.
    for (const body of [
      `{"_v":"1.0.0","_cid":"proto-member","_type":"RefreshOrder","orderId":"${jobApiId}","__proto__":{"a":1}}`,
      `{"_v":"1.0.0","_cid":"proto-meta","_type":"RefreshOrder","orderId":"${jobApiId}","_metadata":{"__proto__":"v"}}`,
    ]) {
      const rest = await rawPost('/v3/commands', body, brand.accessToken);
      assertProblem(rest, 400, 'BAD_REQUEST');
      assert.equal((rest.body.issues as { path: string }[]).map((i) => i.path), ['__proto__']);
      assertTrpcError(await app.http.post('/trpc/commands.send').set('authorization', `Bearer ${brand.accessToken}`).set('content-type', 'application/json').send(body), 400, 'BAD_REQUEST');
    }
    // The depth is read in UTF-8: in UTF-16 a quote hides in a character, and the nesting behind it went unseen (500).
    const utf16 = Buffer.from(`{"email":"\u4122","x":${nested(5000)}}`, 'utf16le');
    const rest16 = await app.http.post('/v3/auth/login').set('content-type', 'application/json; charset=utf-16le').send(utf16);
    assertProblem(rest16, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const rpc16 = await app.http.post('/trpc/admin.accounts.create').set('authorization', ADMIN).set('content-type', 'application/json; charset=utf-16le').send(utf16);
    assertTrpcError(rpc16, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
});

test('/trpc answers a body of another media type in tRPC\'s shape, not a problem', async () => {
  const res = await app.http.post('/trpc/admin.accounts.create').set('authorization', ADMIN).set('content-type', 'application/jsonx').send('{"name":"x","role":"brand"}');
  assertTrpcError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
});

/** Sends only the head of a request that declares `length` body bytes; answers what came back and whether the server closed. */
async function declared(base: string, path: string, length: number) {
  const { hostname, port } = new URL(base);
  const socket = net.connect(Number(port), hostname);
  socket.write(`POST ${path} HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`);
  let text = '';
  socket.on('data', (chunk: Buffer) => { text += chunk.toString(); });
  const closed = await Promise.race([
    new Promise<boolean>((resolve) => socket.once('close', () => resolve(true))),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000)),
  ]);
  socket.destroy();
  return { text, closed };
}

test('a declared content-length over 1 MiB is answered 413 before any of the body is sent, and the connection closed', async () => {
  const base = await listening(app);
  const rest = await declared(base, '/v3/auth/login', 2 * 1024 * 1024);
  assert.match(rest.text, /^HTTP\/1\.1 413/);
  assert.match(rest.text, /"code":"PAYLOAD_TOO_LARGE"/);
  assert.ok(rest.closed, 'the server closed the connection instead of waiting for a body nobody reads');
  const rpc = await declared(base, '/trpc/admin.accounts.create', 5 * 1024 * 1024);
  assert.match(rpc.text, /^HTTP\/1\.1 413/);
  assert.match(rpc.text, /"httpStatus":413/);
  assert.ok(rpc.closed);
});

test('the early 413 is for a declared length over 1 MiB: exactly 1 MiB is read and judged by the operation, one byte more is not', async () => {
  const base = await listening(app);
  const prefix = '{"email":"';
  const exact = `${prefix}${'a'.repeat(MAX_BODY_BYTES - prefix.length - 2)}"}`;
  assert.is(Buffer.byteLength(exact), 1024 * 1024);
  // Read whole, it is valid JSON whose email is not an email: the operation's 400, not the edge's 413.
  assertProblem(await rawPost('/v3/auth/login', exact), 400, 'BAD_REQUEST', /not valid/);
  const over = await declared(base, '/v3/auth/login', MAX_BODY_BYTES + 1);
  assert.match(over.text, /^HTTP\/1\.1 413/);
  assert.ok(over.closed, 'refused before the body, and the connection closed');
});

test.run();
