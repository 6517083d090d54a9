import type supertest from 'supertest';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createAdminClient, outcome } from '../../client/admin-client.ts';
import { runCli } from '../../client/cli.ts';
import { testApp } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { freePort } from '../support/temp-postgres.ts';

// Messages that say what to do, on both faces: a refresh token where an access token belongs, a server without
// ADMIN_TOKEN, the RFC 6750 challenge of every 401, "Required", and the admin client's network failures.
const test = suite('messages that say what to do');
let app: Awaited<ReturnType<typeof appWithMailbox>>;
let partner: Awaited<ReturnType<typeof integrator>>;
let signing: Awaited<ReturnType<typeof integrator>>;

test.before(async () => {
  app = await appWithMailbox();
  partner = await integrator(app, 'partner');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: partner.accountId,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.3.0',
  });
  signing = await integrator(app, 'partner');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: signing.accountId,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.3.0',
    signatureKey: 'messages-signature-key-0123456789abcdef',
  });
});

const EXCHANGE =
  'This is a refresh token, which calls nothing but the token endpoint: exchange it for an access token at POST /v3/auth/access-token, and send that one.';
const NO_ADMIN_TOKEN =
  'This server has no ADMIN_TOKEN, so every admin call is refused: set ADMIN_TOKEN (16 characters or more) in its environment and restart it.';
const REFUSED_TOKEN = 'Bearer error="invalid_token"';

test('a refresh token on an API path: 401 saying to exchange it at POST /v3/auth/access-token, on REST and /trpc', async () => {
  const rest = await app.http
    .get('/v3/partner-orders/paginated')
    .set('authorization', `Bearer ${partner.refreshToken}`);
  assert.equal([rest.status, rest.body.detail, rest.headers['www-authenticate']], [401, EXCHANGE, REFUSED_TOKEN]);
  const legacy = await app.http.get('/v3/partner-orders').set('authorization', `Bearer ${partner.refreshToken}`);
  assert.equal([legacy.status, legacy.body.detail, legacy.headers['www-authenticate']], [401, EXCHANGE, REFUSED_TOKEN]);
  const rpc = await app.http
    .get('/trpc/partnerOrders.paginated?input=%7B%7D')
    .set('authorization', `Bearer ${partner.refreshToken}`);
  assert.equal(
    [rpc.status, rpc.body.error.message, rpc.body.error.data.code, rpc.headers['www-authenticate']],
    [401, EXCHANGE, 'UNAUTHORIZED', REFUSED_TOKEN],
  );
  // Anything else that is not an access token keeps the plain refusal.
  const junk = await app.http.get('/v3/partner-orders/paginated').set('authorization', 'Bearer not-a-token');
  assert.equal([junk.status, junk.body.detail], [401, 'A valid access token is required.']);
});

test('every 401 carries WWW-Authenticate: Bearer, with invalid_token only where the token given was refused (not a good one with a bad signature or of the other role)', async () => {
  const cases: [string, supertest.Test, string][] = [
    ['REST, no token', app.http.get('/v3/partner-orders/paginated'), 'Bearer'],
    ['REST, a bad token', app.http.get('/v3/webhook-config').set('authorization', 'Bearer nope'), REFUSED_TOKEN],
    ['REST, legacy listing, no token', app.http.get('/v3/partner-orders'), 'Bearer'],
    [
      'REST, token endpoint, a bad refresh token',
      app.http.post('/v3/auth/access-token').set('authorization', 'Bearer nope').send({}),
      REFUSED_TOKEN,
    ],
    ['/trpc, no token', app.http.get('/trpc/webhookConfig.get'), 'Bearer'],
    [
      '/trpc, admin, a wrong token',
      app.http
        .post('/trpc/admin.accounts.create')
        .set('authorization', 'Bearer wrong-admin-token-123')
        .send({ name: 'x', role: 'brand' }),
      REFUSED_TOKEN,
    ],
    ['/metrics, no token', app.http.get('/metrics'), 'Bearer'],
    [
      '/metrics, a wrong token',
      app.http.get('/metrics').set('authorization', 'Bearer wrong-admin-token-123'),
      REFUSED_TOKEN,
    ],
    // A good token refused for something else: another token would be refused the same way.
    [
      'REST, partner command, a good token and a wrong signature',
      app.http
        .post('/v3/commands/partner/appointment')
        .set('authorization', `Bearer ${signing.accessToken}`)
        .set('x-webhook-signature', 'deadbeef')
        .send({}),
      'Bearer',
    ],
    [
      'REST, partner command, a good token and no signature',
      app.http.post('/v3/commands/partner/appointment').set('authorization', `Bearer ${signing.accessToken}`).send({}),
      'Bearer',
    ],
    [
      '/trpc, partner command, a good token and a wrong signature',
      app.http
        .post('/trpc/partnerCommands.setJobAppointment')
        .set('authorization', `Bearer ${signing.accessToken}`)
        .set('x-webhook-signature', 'deadbeef')
        .send({}),
      'Bearer',
    ],
    [
      'REST, a partner token on a brand endpoint',
      app.http.post('/v3/commands').set('authorization', `Bearer ${partner.accessToken}`).send({}),
      'Bearer',
    ],
    [
      'REST, legacy listing, a bad token',
      app.http.get('/v3/partner-orders').set('authorization', 'Bearer nope'),
      REFUSED_TOKEN,
    ],
  ];
  for (const [name, request, challenge] of cases) {
    const res = await request;
    assert.is(res.status, 401, name);
    assert.is(res.headers['www-authenticate'], challenge, name);
  }
  // Answers other than 401 carry none.
  const ok = await app.http.get('/v3/webhook-config').set('authorization', `Bearer ${partner.accessToken}`);
  assert.is(ok.headers['www-authenticate'], undefined);
});

test('a /trpc batch challenges when any of its calls is 401, and not when none is', async () => {
  const none = await app.http
    .get(`/trpc/webhookConfig.get,partnerOrders.paginated?batch=1&input=${encodeURIComponent('{"0":{},"1":{}}')}`)
    .set('authorization', `Bearer ${partner.accessToken}`);
  assert.is(none.status, 200, JSON.stringify(none.body));
  const oneRefused = await app.http
    .get(`/trpc/webhookConfig.get,admin.deliveries.list?batch=1&input=${encodeURIComponent('{"0":{},"1":{}}')}`)
    .set('authorization', `Bearer ${partner.accessToken}`);
  assert.is(oneRefused.status, 207, JSON.stringify(oneRefused.body));
  assert.equal(
    oneRefused.body.map((r: { error?: { data: { httpStatus: number } } }) => r.error?.data.httpStatus ?? 200),
    [200, 401],
  );
  assert.is(oneRefused.headers['www-authenticate'], REFUSED_TOKEN);
  assert.is(none.headers['www-authenticate'], undefined);
});

test('admin calls on a server without ADMIN_TOKEN: 401 saying the server has none and how to set it, on /trpc and /metrics', async () => {
  const bare = await testApp({ ADMIN_TOKEN: '' });
  const rpc = await bare.http
    .post('/trpc/admin.accounts.create')
    .set('authorization', 'Bearer anything-at-all-0123')
    .send({ name: 'x', role: 'brand' });
  assert.equal(
    [rpc.status, rpc.body.error.message, rpc.headers['www-authenticate']],
    [401, NO_ADMIN_TOKEN, REFUSED_TOKEN],
  );
  const metrics = await bare.http.get('/metrics');
  assert.equal(
    [metrics.status, metrics.body.detail, metrics.headers['www-authenticate']],
    [401, NO_ADMIN_TOKEN, 'Bearer'],
  );
  // With a token set, a wrong one is told only that it is wrong.
  const wrong = await app.http
    .post('/trpc/admin.accounts.create')
    .set('authorization', 'Bearer wrong-admin-token-123')
    .send({ name: 'x', role: 'brand' });
  assert.is(wrong.body.error.message, 'A valid admin token is required.');
});

test('a missing member reads "Required", on REST and /trpc', async () => {
  const rest = await app.http.post('/v3/auth/login').send({});
  assert.is(rest.status, 400);
  assert.equal(rest.body.issues, [{ path: 'email', message: 'Required' }]);
  const rpc = await app.admin.mutate('accounts.create', { role: 'brand' });
  assert.is(rpc.status, 400);
  assert.equal(rpc.body.error.data.issues, [{ path: 'name', message: 'Required' }]);
  // Other issues keep their own text.
  const wrongType = await app.http.post('/v3/auth/login').send({ email: 42 });
  assert.not.equal(wrongType.body.issues[0].message, 'Required');
});

test('the admin client\'s network failures name the URL and the cause, not "fetch failed"', async () => {
  const port = await freePort();
  const down = await outcome(
    createAdminClient(`http://127.0.0.1:${port}`, 'an-admin-token-0123456789').admin.accounts.create.mutate({
      name: 'X',
      role: 'brand',
    }),
  );
  assert.equal(down.ok ? null : [down.error.code, down.error.message], [
    'NETWORK',
    `could not reach http://127.0.0.1:${port}/trpc: ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:${port})`,
  ]);
  const printed: string[] = [];
  const code = await runCli(
    ['accounts', 'create', '--name', 'X', '--role', 'brand'],
    { ADMIN_URL: `http://127.0.0.1:${port}`, ADMIN_TOKEN: 'an-admin-token-0123456789' },
    { stdout: (text) => printed.push(text), stderr: (text) => printed.push(text) },
  );
  assert.is(code, 1);
  assert.match(printed.join(''), `failed (NETWORK): could not reach http://127.0.0.1:${port}/trpc: ECONNREFUSED`);
  assert.not.match(printed.join(''), 'fetch failed');
  const nowhere = await outcome(
    createAdminClient('http://no-such-host.invalid:3000', 'an-admin-token-0123456789').admin.accounts.create.mutate({
      name: 'X',
      role: 'brand',
    }),
  );
  assert.match(
    nowhere.ok ? '' : nowhere.error.message,
    /^could not reach http:\/\/no-such-host\.invalid:3000\/trpc: (ENOTFOUND|EAI_AGAIN) /,
  );
});

test.run();
