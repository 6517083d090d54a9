import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ADMIN,
  app,
  assertProblem,
  assertTrpcError,
  brand,
  jobApiId,
  nested,
  partner,
  rawPost,
  unchanged,
  withOddInputApp,
} from './support.ts';

// Members the operation does not define, names of Object.prototype and a member named __proto__ are refused like any
// odd input, and so is a body in a charset other than UTF-8.
const test = suite('odd input, members: always a 4xx, and nothing changes');
withOddInputApp(test);

test('a member the operation does not define is 400 naming it, on every body, and nothing happens', async () => {
  const before = (await app.http.get('/v3/webhook-config').set('authorization', `Bearer ${partner.accessToken}`)).body;
  await unchanged(async () => {
    const cases: [Promise<{ status: number; body: Record<string, unknown> }>, string][] = [
      [
        app.http
          .put('/v3/webhook-config')
          .set('authorization', `Bearer ${partner.accessToken}`)
          .send({ url: 'https://hooks.example.com/x', transformer: 'partner-format', version: '1.3.0', enable: false }),
        'enable',
      ],
      [
        app.http
          .post('/v3/auth/access-token')
          .set('authorization', `Bearer ${partner.refreshToken}`)
          .send({ expiresAfter: 60 }),
        'expiresAfter',
      ],
      [
        app.http
          .post('/v3/webhook-deliveries/redeliver-failed')
          .set('authorization', `Bearer ${brand.accessToken}`)
          .send({ since: '2026-01-01T00:00:00Z', dryRun: true }),
        'dryRun',
      ],
      [app.http.post('/v3/auth/login').send({ email: 'someone@example.com', password: 'x' }), 'password'],
      [
        app.http
          .post('/v3/webhook-config/test')
          .set('authorization', `Bearer ${partner.accessToken}`)
          .send({ verbose: true }),
        'verbose',
      ],
      [
        app.http
          .post('/v3/commands')
          .set('authorization', `Bearer ${brand.accessToken}`)
          .send({ _v: '1.0.0', _cid: 'odd-unknown-1', _type: 'RefreshOrder', orderId: jobApiId, priority: 'high' }),
        'priority',
      ],
      [
        app.http
          .post('/trpc/auth.accessToken')
          .set('authorization', `Bearer ${partner.refreshToken}`)
          .send({ expiresAfter: 60 }),
        'expiresAfter',
      ],
      [
        app.http
          .post('/trpc/admin.accounts.create')
          .set('authorization', ADMIN)
          .send({ name: 'n', role: 'brand', region: 'eu' }),
        'region',
      ],
    ];
    for (const [pending, member] of cases) {
      const res = await pending;
      assert.is(res.status, 400, `${member}: ${JSON.stringify(res.body)}`);
      const issues = (res.body.issues ?? (res.body.error as { data: { issues: unknown } }).data.issues) as {
        path: string;
        message: string;
      }[];
      assert.ok(
        issues.some((i) => i.path === member),
        `${member}: ${JSON.stringify(issues)}`,
      );
    }
  });
  const after = (await app.http.get('/v3/webhook-config').set('authorization', `Bearer ${partner.accessToken}`)).body;
  assert.equal(after, before, 'the configuration stayed as it was');
});

test('names of Object.prototype, a member named __proto__, and a charset other than UTF-8 are refused like any odd input', async () => {
  await unchanged(async () => {
    for (const type of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      const rest = await rawPost(
        '/v3/commands',
        JSON.stringify({ _v: '1.0.0', _cid: `proto-${type}`, _type: type, orderId: jobApiId }),
        brand.accessToken,
      );
      assertProblem(rest, 400, 'BAD_REQUEST');
      const rpc = await app.http
        .post('/trpc/commands.send')
        .set('authorization', `Bearer ${brand.accessToken}`)
        .set('content-type', 'application/json')
        .send(JSON.stringify({ _v: '1.0.0', _cid: `proto-${type}`, _type: type, orderId: jobApiId }));
      assertTrpcError(rpc, 400, 'BAD_REQUEST');
    }
    // Parsed, a __proto__ member would become the prototype of a copy and slip past the strict checks.
    for (const body of [
      `{"_v":"1.0.0","_cid":"proto-member","_type":"RefreshOrder","orderId":"${jobApiId}","__proto__":{"a":1}}`,
      `{"_v":"1.0.0","_cid":"proto-meta","_type":"RefreshOrder","orderId":"${jobApiId}","_metadata":{"__proto__":"v"}}`,
      // Written with escapes, the name is the same member once parsed (a review carried fields in with it).
      `{"_v":"1.0.0","_cid":"proto-escaped","_type":"RefreshOrder","\\u005f_proto__":{"orderId":"${jobApiId}"}}`,
      `{"_v":"1.0.0","_cid":"proto-deep","_type":"RefreshOrder","orderId":"${jobApiId}","_metadata":[{"__pr\\u006fto__":1}]}`,
    ]) {
      const rest = await rawPost('/v3/commands', body, brand.accessToken);
      assertProblem(rest, 400, 'BAD_REQUEST');
      assert.equal(
        (rest.body.issues as { path: string }[]).map((i) => i.path),
        ['__proto__'],
      );
      assertTrpcError(
        await app.http
          .post('/trpc/commands.send')
          .set('authorization', `Bearer ${brand.accessToken}`)
          .set('content-type', 'application/json')
          .send(body),
        400,
        'BAD_REQUEST',
      );
    }
    // The depth is read in UTF-8: in UTF-16 a quote hides in a character, and the nesting behind it went unseen (500).
    const utf16 = Buffer.from(`{"email":"\u4122","x":${nested(5000)}}`, 'utf16le');
    const rest16 = await app.http
      .post('/v3/auth/login')
      .set('content-type', 'application/json; charset=utf-16le')
      .send(utf16);
    assertProblem(rest16, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const rpc16 = await app.http
      .post('/trpc/admin.accounts.create')
      .set('authorization', ADMIN)
      .set('content-type', 'application/json; charset=utf-16le')
      .send(utf16);
    assertTrpcError(rpc16, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
});

test.run();
