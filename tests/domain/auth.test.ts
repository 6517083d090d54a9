import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LOGIN_STATUS_MESSAGE } from '../../domain/auth.ts';
import { authenticate } from '../../domain/use-cases/authenticate.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createContact } from '../../domain/use-cases/create-contact.ts';
import { refuseEarlyPastShare } from '../../domain/use-cases/fair-use-refusal.ts';
import { mintAccessToken } from '../../domain/use-cases/mint-access-token.ts';
import { requestRefreshToken } from '../../domain/use-cases/request-refresh-token.ts';
import { setContactApiAccess } from '../../domain/use-cases/set-contact-api-access.ts';
import { CountingRateLimiter, type FakeDeps, fakeDeps } from '../fakes.ts';
import { rejectsWith } from './helpers.ts';

const test = suite('authentication use cases');

async function world(deps: FakeDeps) {
  const partner = await createAccount(deps, { name: 'P', role: 'partner' });
  const brand = await createAccount(deps, { name: 'B', role: 'brand' });
  const withAccess = await createContact(deps, { accountId: partner.id, email: 'Ops@Partner.Example' });
  const withoutAccess = await createContact(deps, {
    accountId: partner.id,
    email: 'quiet@partner.example',
    apiAccess: false,
  });
  const brandContact = await createContact(deps, { accountId: brand.id, email: 'api@brand.example' });
  return { partner, brand, withAccess, withoutAccess, brandContact };
}

async function loginAndReadToken(deps: FakeDeps, email: string) {
  await requestRefreshToken(deps, { email, clientAddress: '203.0.113.1' });
  await deps.deferrer.runAll(deps);
  const mail = deps.mailer.sent.at(-1)!;
  return mail.text.split('\n').find((line) => line.startsWith('refresh-token-'))!;
}

test('login answers the same for registered, unknown and access-less addresses; mails only after the answer', async () => {
  const deps = fakeDeps();
  await world(deps);
  const answers = [];
  for (const email of ['ops@partner.example', 'nobody@partner.example', 'quiet@partner.example']) {
    answers.push(await requestRefreshToken(deps, { email, clientAddress: '203.0.113.1' }));
  }
  assert.equal(answers, Array(3).fill({ status: LOGIN_STATUS_MESSAGE }));
  assert.is(deps.mailer.sent.length, 0, 'nothing is sent before the answer');
  assert.is(deps.deferrer.queued.length, 3, 'every address takes the same path');
  await deps.deferrer.runAll(deps);
  assert.equal(
    deps.mailer.sent.map((m) => m.to),
    ['Ops@Partner.Example'],
  );
});

test("the mail holds the refresh token alone on its line, and one link: the portal's sign-in with that token", async () => {
  const deps = fakeDeps();
  await world(deps);
  const token = await loginAndReadToken(deps, 'OPS@partner.example');
  const lines = deps.mailer.sent[0]!.text.split('\n');
  assert.ok(lines.includes(token));
  assert.equal(deps.mailer.sent[0]!.text.match(/https?:\/\/\S+/g), [deps.links.portalSignIn(token)]);
});

test('a malformed address is refused; a limit reached is RATE_LIMITED with a wait', async () => {
  const deps = fakeDeps();
  await rejectsWith(
    requestRefreshToken(deps, { email: 'not-an-address', clientAddress: 'x' }),
    'VALIDATION_FAILED',
    'email',
  );
  for (let i = 0; i < 5; i++) await requestRefreshToken(deps, { email: 'a@b.example', clientAddress: 'x' });
  const error = await requestRefreshToken(deps, { email: 'A@b.example', clientAddress: 'x' }).catch(
    (e: { code: string; retryAfterSeconds: number }) => e,
  );
  assert.is((error as { code: string }).code, 'RATE_LIMITED');
  assert.is((error as { retryAfterSeconds: number }).retryAfterSeconds, 60);
});

test('refresh → access: default lifetime 3600, bounds 60…86400', async () => {
  const deps = fakeDeps();
  await world(deps);
  const refresh = await loginAndReadToken(deps, 'ops@partner.example');
  const minted = await mintAccessToken(deps, { refreshToken: refresh });
  assert.equal(
    { ...minted, access_token: typeof minted.access_token },
    { access_token: 'string', token_type: 'Bearer', expires_in: 3600 },
  );
  assert.is((await mintAccessToken(deps, { refreshToken: refresh, expiresAfter: 60 })).expires_in, 60);
  assert.is((await mintAccessToken(deps, { refreshToken: refresh, expiresAfter: 86_400 })).expires_in, 86_400);
  for (const bad of [59, 86_401, 1.5])
    await rejectsWith(
      mintAccessToken(deps, { refreshToken: refresh, expiresAfter: bad }),
      'VALIDATION_FAILED',
      'expires_after',
    );
});

test('the refresh token lasts exactly 24 hours and is usable many times until then', async () => {
  const deps = fakeDeps();
  await world(deps);
  const refresh = await loginAndReadToken(deps, 'ops@partner.example');
  deps.clock.advance(24 * 3600 - 1);
  await mintAccessToken(deps, { refreshToken: refresh });
  await mintAccessToken(deps, { refreshToken: refresh });
  deps.clock.advance(1);
  await rejectsWith(mintAccessToken(deps, { refreshToken: refresh }), 'UNAUTHENTICATED');
});

test('token kinds do not mix: a refresh token authenticates nothing, an access token mints nothing', async () => {
  const deps = fakeDeps();
  await world(deps);
  const refresh = await loginAndReadToken(deps, 'ops@partner.example');
  const { access_token } = await mintAccessToken(deps, { refreshToken: refresh });
  await rejectsWith(authenticate(deps, { accessToken: refresh, roles: ['partner'] }), 'UNAUTHENTICATED');
  await rejectsWith(mintAccessToken(deps, { refreshToken: access_token }), 'UNAUTHENTICATED');
  const principal = await authenticate(deps, { accessToken: access_token, roles: ['partner'] });
  assert.is(principal.role, 'partner');
});

test('a role that does not fit is refused; so is a contact whose access was withdrawn, from the next call on', async () => {
  const deps = fakeDeps();
  const { withAccess } = await world(deps);
  const refresh = await loginAndReadToken(deps, 'ops@partner.example');
  const { access_token } = await mintAccessToken(deps, { refreshToken: refresh });
  await rejectsWith(authenticate(deps, { accessToken: access_token, roles: ['brand'] }), 'REQUEST_UNAUTHENTICATED');
  await authenticate(deps, { accessToken: access_token, roles: ['brand', 'partner'] });
  await setContactApiAccess(deps, { contactId: withAccess.id, apiAccess: false });
  await rejectsWith(authenticate(deps, { accessToken: access_token, roles: ['partner'] }), 'UNAUTHENTICATED');
  await rejectsWith(mintAccessToken(deps, { refreshToken: refresh }), 'UNAUTHENTICATED');
  await rejectsWith(authenticate(deps, { accessToken: null, roles: ['partner'] }), 'UNAUTHENTICATED');
});

test("an account past its share is refused before the request path, by its valid access tokens of the operation's roles only", async () => {
  const deps = { ...fakeDeps(), requestLimiter: new CountingRateLimiter(2) };
  const claims = (accountId: string) => ({ accountId, contactId: `contact-of-${accountId}`, role: 'partner' as const });
  const token = await deps.tokens.issue('access', claims('acc-1'), deps.clock.now(), 600);
  const other = await deps.tokens.issue('access', claims('acc-2'), deps.clock.now(), 600);
  const refresh = await deps.tokens.issue('refresh', claims('acc-1'), deps.clock.now(), 600);
  const early = (accessToken: string | null, roles: ('brand' | 'partner')[] = ['partner']) =>
    refuseEarlyPastShare(deps, { accessToken, roles });
  for (let i = 0; i < 2; i++) await deps.requestLimiter.consume('acc-1');
  assert.is(
    (await early(token))?.accountId,
    'acc-1',
    "within its share: let through, with the caller for the edge's own checks",
  );
  await deps.requestLimiter.consume('acc-1');
  await rejectsWith(early(token), 'RATE_LIMITED');
  assert.is(
    await early(token).catch((e: { retryAfterSeconds?: number }) => e.retryAfterSeconds),
    60,
    'with the seconds to wait',
  );
  await early(other); // another account is not refused
  assert.is(await early(token, ['brand']), null, "another role's operation: left to authenticate (401)");
  await early(refresh); // a refresh token is judged where it is used
  await early(`${token}x`); // an unverified token is left to authenticate (401)
  await early(null);
});

test.run();
