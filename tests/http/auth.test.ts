import { randomUUID } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LOGIN_STATUS_MESSAGE } from '../../domain/auth.ts';
import { JWT_SECRET, uniqueEmail } from '../support/app.ts';
import { appWithMailbox, integrator, refreshTokenFor } from '../support/integrators.ts';

type App = Awaited<ReturnType<typeof appWithMailbox>>;
const test = suite('authentication over REST');
let app: App;
let partner: Awaited<ReturnType<typeof integrator>>;

test.before(async () => {
  app = await appWithMailbox({ TEST_CLOCK: '1' });
  partner = await integrator(app, 'partner');
});

const problem401 = (
  res: { status: number; headers: Record<string, string>; body: { code: string } },
  label: string,
) => {
  assert.is(res.status, 401, label);
  assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/, label);
  assert.is(res.body.code, 'UNAUTHORIZED', label);
};

test('login: the same status and body for registered, unknown and access-less addresses', async () => {
  const quiet = uniqueEmail('quiet');
  await app.admin.call('contacts.create', { accountId: partner.accountId, email: quiet, apiAccess: false });
  const before = app.mailbox.sent.length;
  const answers = [];
  for (const email of [partner.email.toUpperCase(), uniqueEmail('nobody'), quiet]) {
    const res = await app.http.post('/v3/auth/login').send({ email });
    answers.push({ status: res.status, type: res.headers['content-type'], body: res.body });
  }
  assert.equal(answers[0], { status: 200, type: 'application/json', body: { status: LOGIN_STATUS_MESSAGE } });
  assert.equal(answers[1], answers[0]);
  assert.equal(answers[2], answers[0]);
  await app.drainDeferred();
  // Only the contact with API access gets a mail, found although the address was sent in capitals.
  assert.equal(
    app.mailbox.sent.slice(before).map((m) => m.to),
    [partner.email],
  );
});

test('login: a missing or malformed e-mail is 400', async () => {
  for (const body of [{}, { email: 'nope' }, { email: 42 }, { email: '' }]) {
    const res = await app.http.post('/v3/auth/login').send(body);
    assert.is(res.status, 400, JSON.stringify(body));
    assert.is(res.body.issues[0].path, 'email');
  }
});

test('access token: expires_after defaults to 3600; 60 and 86400 accepted', async () => {
  const auth = `Bearer ${partner.refreshToken}`;
  const plain = await app.http.post('/v3/auth/access-token').set('authorization', auth);
  assert.is(plain.status, 200, 'a POST without any body is {}');
  assert.equal(
    { ...plain.body, access_token: typeof plain.body.access_token },
    { access_token: 'string', token_type: 'Bearer', expires_in: 3600 },
  );
  for (const seconds of [60, 86_400]) {
    const res = await app.http
      .post('/v3/auth/access-token')
      .set('authorization', auth)
      .send({ expires_after: seconds });
    assert.is(res.status, 200);
    assert.is(res.body.expires_in, seconds);
    const payload = JSON.parse(Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString());
    assert.is(payload.exp - payload.iat, seconds);
  }
});

test('access token: 59, 86401, 1.5 and "60" are 400', async () => {
  for (const value of [59, 86_401, 1.5, '60', null, true]) {
    const res = await app.http
      .post('/v3/auth/access-token')
      .set('authorization', `Bearer ${partner.refreshToken}`)
      .send({ expires_after: value });
    assert.is(res.status, 400, JSON.stringify(value));
    assert.is(res.body.issues[0].path, 'expires_after');
  }
});

test('a refresh token calls no API; an access token mints no other', async () => {
  problem401(
    await app.http.get('/v3/webhook-config').set('authorization', `Bearer ${partner.refreshToken}`),
    'refresh on API',
  );
  problem401(
    await app.http.post('/v3/auth/access-token').set('authorization', `Bearer ${partner.accessToken}`).send({}),
    'access mints',
  );
});

test('the refresh token lasts exactly 24 hours (injected clock)', async () => {
  const who = await integrator(app, 'brand');
  const payload = JSON.parse(Buffer.from(who.refreshToken.split('.')[1]!, 'base64url').toString());
  assert.is(payload.exp - payload.iat, 86_400);
  // The test clock runs on from real time: a margin of 3 s for the time this test itself takes on a busy machine (the
  // lifetime is exactly 24 h by the claims above); then past the end.
  await app.admin.call('testClock.advance', { seconds: 86_397 });
  assert.is(
    (await app.http.post('/v3/auth/access-token').set('authorization', `Bearer ${who.refreshToken}`).send({})).status,
    200,
  );
  await app.admin.call('testClock.advance', { seconds: 3 });
  problem401(
    await app.http.post('/v3/auth/access-token').set('authorization', `Bearer ${who.refreshToken}`).send({}),
    'expired refresh',
  );
});

test('an access token expires by the injected clock', async () => {
  const who = await integrator(app, 'partner');
  const res = await app.http
    .post('/v3/auth/access-token')
    .set('authorization', `Bearer ${who.refreshToken}`)
    .send({ expires_after: 60 });
  const auth = `Bearer ${res.body.access_token}`;
  assert.is((await app.http.get('/v3/webhook-config').set('authorization', auth)).status, 404, 'valid before');
  await app.admin.call('testClock.advance', { seconds: 60 });
  problem401(await app.http.get('/v3/webhook-config').set('authorization', auth), 'expired access token');
});

test('401 problem for every forged, expired or malformed access token', async () => {
  const key = new TextEncoder().encode(JWT_SECRET);
  const claims = JSON.parse(Buffer.from(partner.accessToken.split('.')[1]!, 'base64url').toString());
  const now = Math.floor(
    Date.parse((await app.admin.call<{ now: string }>('testClock.advance', { seconds: 1 })).now) / 1000,
  );
  const forge = (o: { alg?: string; typ?: string; key?: Uint8Array; iss?: string; aud?: string; exp?: number }) =>
    new SignJWT({ acc: claims.acc, role: claims.role })
      .setProtectedHeader({ alg: o.alg ?? 'HS256', typ: o.typ ?? 'at+jwt' })
      .setIssuer(o.iss ?? claims.iss)
      .setAudience(o.aud ?? claims.aud)
      .setSubject(claims.sub)
      .setJti(randomUUID())
      .setIssuedAt(now - 10)
      .setExpirationTime(o.exp ?? now + 600)
      .sign(o.key ?? key);
  const ok = await app.http.get('/v3/webhook-config').set('authorization', `Bearer ${await forge({})}`);
  assert.ok(ok.status === 404 || ok.status === 200, 'the forge makes tokens the service accepts');

  const [h, , s] = (await forge({})).split('.');
  const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, role: 'brand' })).toString('base64url')}.${s}`;
  const none = new UnsecuredJWT({ acc: claims.acc, role: claims.role })
    .setIssuer(claims.iss)
    .setAudience(claims.aud)
    .setSubject(claims.sub)
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .encode();
  const cases: [string, string | undefined][] = [
    ['alg none', `Bearer ${none}`],
    ['wrong key', `Bearer ${await forge({ key: new TextEncoder().encode('another-secret-0123456789-0123456789') })}`],
    ['tampered payload', `Bearer ${tampered}`],
    ['expired', `Bearer ${await forge({ exp: now - 1 })}`],
    ['swapped typ', `Bearer ${await forge({ typ: 'refresh+jwt' })}`],
    ['wrong iss', `Bearer ${await forge({ iss: 'urn:evil' })}`],
    ['wrong aud', `Bearer ${await forge({ aud: 'urn:partner-brand-api:token-endpoint' })}`],
    ['missing header', undefined],
    ['garbage header', 'Bearer garbage'],
    ['not bearer', `Basic ${Buffer.from('a:b').toString('base64')}`],
  ];
  for (const [label, header] of cases) {
    const req = app.http.get('/v3/webhook-config');
    problem401(await (header === undefined ? req : req.set('authorization', header)), label);
  }
});

test('withdrawn API access: 401 from the next call on', async () => {
  const who = await integrator(app, 'partner');
  assert.is((await app.http.get('/v3/webhook-config').set('authorization', `Bearer ${who.accessToken}`)).status, 404);
  await app.admin.call('contacts.setApiAccess', { contactId: who.contactId, apiAccess: false });
  problem401(await app.http.get('/v3/webhook-config').set('authorization', `Bearer ${who.accessToken}`), 'withdrawn');
  problem401(
    await app.http.post('/v3/auth/access-token').set('authorization', `Bearer ${who.refreshToken}`).send({}),
    'withdrawn refresh',
  );
});

test('the 6th login for one e-mail within a minute is 429 with Retry-After', async () => {
  const limited = await appWithMailbox({ LOGIN_LIMIT_PER_EMAIL: '5' });
  const email = uniqueEmail('limited');
  for (let i = 0; i < 5; i++) assert.is((await limited.http.post('/v3/auth/login').send({ email })).status, 200);
  const res = await limited.http.post('/v3/auth/login').send({ email: email.toUpperCase() });
  assert.is(res.status, 429);
  assert.is(res.body.code, 'TOO_MANY_REQUESTS');
  assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
  const wait = Number(res.headers['retry-after']);
  assert.ok(wait >= 1 && wait <= 60, String(wait));
});

test('logins per client address are limited too (behind a trusted proxy, by X-Forwarded-For)', async () => {
  const limited = await appWithMailbox({ LOGIN_LIMIT_PER_ADDRESS: '3' });
  const address = `203.0.113.${Math.floor(Math.random() * 250) + 1}`;
  const login = (ip: string) =>
    limited.http
      .post('/v3/auth/login')
      .set('x-forwarded-for', ip)
      .send({ email: uniqueEmail('addr') });
  for (let i = 0; i < 3; i++) assert.is((await login(address)).status, 200);
  assert.is((await login(address)).status, 429);
  assert.is((await login('198.51.100.7')).status, 200, 'another address is not affected');
});

test('webhook configuration: 404 until set; PUT answers like GET and never echoes the key', async () => {
  const who = await integrator(app, 'brand');
  const auth = `Bearer ${who.accessToken}`;
  assert.is((await app.http.get('/v3/webhook-config').set('authorization', auth)).status, 404);
  const put = await app.http.put('/v3/webhook-config').set('authorization', auth).send({
    url: 'https://hooks.example.com/brand',
    transformer: 'default',
    version: '1.1.0',
    signatureKey: 'brand-signing-key-0001',
  });
  assert.is(put.status, 200, JSON.stringify(put.body));
  const expected = {
    scope: 'brand',
    url: 'https://hooks.example.com/brand',
    transformer: 'default',
    version: '1.1.0',
    enabled: true,
    hasSignatureKey: true,
    previousKeyExpiresAt: null,
    failingSince: null,
    disabledReason: null,
    asymmetricSigning: false,
    publicKey: null,
    previousPublicKey: null,
  };
  assert.equal(put.body, expected);
  assert.equal((await app.http.get('/v3/webhook-config').set('authorization', auth)).body, expected);
  assert.not.match(JSON.stringify(put.body), 'brand-signing-key');
  const kept = await app.http
    .put('/v3/webhook-config')
    .set('authorization', auth)
    .send({ url: 'https://hooks.example.com/brand', transformer: 'default', version: '1.3.0', enabled: false });
  assert.equal(kept.body, { ...expected, version: '1.3.0', enabled: false, disabledReason: 'integrator' });
  const removed = await app.http
    .put('/v3/webhook-config')
    .set('authorization', auth)
    .send({ url: 'https://hooks.example.com/brand', transformer: 'default', version: '1.3.0', signatureKey: null });
  assert.is(removed.body.hasSignatureKey, false);
  for (const bad of [
    { url: 'https://x.example', transformer: 'default' },
    { url: 'https://x.example', transformer: 'default', version: '1.3.0', enabled: 'false' },
  ]) {
    assert.is(
      (await app.http.put('/v3/webhook-config').set('authorization', auth).send(bad)).status,
      400,
      JSON.stringify(bad),
    );
  }
});

test('the refresh token mailed is the one that works, and only for its own contact', async () => {
  const email = uniqueEmail('own');
  await app.admin.call('contacts.create', { accountId: partner.accountId, email });
  const token = await refreshTokenFor(app, email);
  const res = await app.http.post('/v3/auth/access-token').set('authorization', `Bearer ${token}`).send({});
  const claims = JSON.parse(Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString());
  assert.is(claims.acc, partner.accountId);
  assert.is(claims.role, 'partner');
  assert.is.not(claims.sub, partner.contactId);
});

test.run();
