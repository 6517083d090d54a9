import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ADMIN,
  app,
  assertProblem,
  assertTrpcError,
  brand,
  jobApiId,
  partner,
  rawPost,
  unchanged,
  withOddInputApp,
} from './support.ts';

// Text that cannot be stored or read as UTF-8 (a path escape that is not UTF-8, U+0000, an unpaired surrogate) is
// a 400 naming where it is.
const test = suite('odd input, characters: always a 4xx, and nothing changes');
withOddInputApp(test);

test('a path escape that is not UTF-8 is 400 naming its parameter, not "the body could not be read"', async () => {
  for (const [path, name] of [
    ['/v3/commands/%FF', 'cid'],
    ['/v3/poll/job/*/ab%E9cd', 'orderId'],
    ['/v3/poll/job/%C0/x', 'version'],
  ] as const) {
    const res = await app.http.get(path).set('authorization', `Bearer ${brand.accessToken}`);
    assertProblem(res, 400, 'BAD_REQUEST', /percent-encoded UTF-8/);
    assert.equal(
      (res.body.issues as { path: string }[]).map((i) => i.path),
      [name],
      path,
    );
  }
  const redeliver = await app.http
    .post('/v3/webhook-deliveries/%FF/redeliver')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({});
  assert.equal([redeliver.status, (redeliver.body.issues as { path: string }[])[0]?.path], [400, 'id']);
});

const NUL = 'a\u0000b';
const LONE = 'a\ud800b';

test('U+0000 or an unpaired surrogate anywhere is 400 naming where it is, never a 5xx or a 503, and changes nothing', async () => {
  const issuePaths = (res: { body: Record<string, unknown> }) =>
    (
      (res.body.issues ?? (res.body.error as { data?: { issues?: unknown } })?.data?.issues ?? []) as { path: string }[]
    ).map((i) => i.path);
  const brandPost = (body: unknown) =>
    app.http
      .post('/v3/commands')
      .set('authorization', `Bearer ${brand.accessToken}`)
      .send(body as object);
  const envelope = { _v: '1.0.0', _cid: 'odd-cid-1' };
  await unchanged(async () => {
    for (const bad of [NUL, LONE]) {
      const cases: [Promise<{ status: number; body: Record<string, unknown> }>, string][] = [
        [app.http.post('/v3/auth/login').send({ email: `x${bad}@example.com` }), 'email'],
        [brandPost({ ...envelope, _cid: bad, _type: 'RefreshOrder', orderId: jobApiId }), '_cid'],
        [
          brandPost({ ...envelope, _type: 'UpdateCustomer', orderId: jobApiId, customer: { firstName: bad } }),
          'customer.firstName',
        ],
        [
          brandPost({ ...envelope, _type: 'RefreshOrder', orderId: jobApiId, _metadata: { 'ext-ref': bad } }),
          '_metadata.ext-ref',
        ],
        [brandPost({ ...envelope, _type: 'UpdateOrderExternalId', orderId: bad, externalId: 'e' }), 'orderId'],
        [
          app.http
            .post('/v3/commands/partner/your-order-id')
            .set('authorization', `Bearer ${partner.accessToken}`)
            .send({ ...envelope, _type: 'SetJobYourOrderId', jobApiId, yourOrderID: bad }),
          'yourOrderID',
        ],
        [
          app.http
            .put('/v3/webhook-config')
            .set('authorization', `Bearer ${partner.accessToken}`)
            .send({
              url: 'https://hooks.example.com/x',
              transformer: 'partner-format',
              version: '1.3.0',
              signatureKey: `0123456789abcdef${bad}`,
            }),
          'signatureKey',
        ],
        [
          app.http
            .get(`/v3/poll/job/*/${encodeURIComponent(NUL)}`)
            .set('authorization', `Bearer ${partner.accessToken}`),
          'orderId',
        ],
        [app.http.get('/v3/commands/%00').set('authorization', `Bearer ${brand.accessToken}`), 'cid'],
        [
          app.http
            .get('/v3/partner-orders/paginated?updatedSince=%00')
            .set('authorization', `Bearer ${partner.accessToken}`),
          'updatedSince',
        ],
        [
          app.http.post('/trpc/admin.accounts.create').set('authorization', ADMIN).send({ name: bad, role: 'brand' }),
          'name',
        ],
        [
          app.http
            .post('/trpc/admin.contacts.create')
            .set('authorization', ADMIN)
            .send({ accountId: brand.accountId, email: `y${bad}@example.com` }),
          'email',
        ],
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
      assert.ok(
        (res.body.issues as { path: string; message: string }[]).some(
          (i) => i.path === path && /unpaired surrogate/.test(i.message),
        ),
        `${path}: ${JSON.stringify(res.body)}`,
      );
    }
    const rpc = await app.http
      .post('/trpc/admin.accounts.create')
      .set('authorization', ADMIN)
      .set('content-type', 'application/json')
      .send(`{"name":"${LOW}","role":"brand"}`);
    assertTrpcError(rpc, 400, 'BAD_REQUEST');
  });
});

test.run();
