import { SignJWT, UnsecuredJWT } from 'jose';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomIds } from '../../adapters/system.ts';
import { JoseTokenService } from '../../adapters/tokens.ts';

const test = suite('jose token service');
const key = new TextEncoder().encode('k'.repeat(40));
const tokens = new JoseTokenService(key, randomIds);
const claims = { contactId: 'c-1', accountId: 'a-1', role: 'partner' as const };
const now = new Date('2026-11-22T12:00:00Z');
const iat = Math.floor(now.getTime() / 1000);

const forge = (opts: {
  typ?: string;
  alg?: string;
  iss?: string;
  aud?: string;
  key?: Uint8Array;
  exp?: number;
  payload?: Record<string, unknown>;
}) =>
  new SignJWT({ acc: 'a-1', role: 'partner', ...opts.payload })
    .setProtectedHeader({ alg: opts.alg ?? 'HS256', typ: opts.typ ?? 'at+jwt' })
    .setIssuer(opts.iss ?? 'urn:partner-brand-api')
    .setAudience(opts.aud ?? 'urn:partner-brand-api:v3')
    .setSubject('c-1')
    .setJti('j-1')
    .setIssuedAt(iat)
    .setExpirationTime(opts.exp ?? iat + 600)
    .sign(opts.key ?? key);

test('issued tokens verify as their own kind only', async () => {
  const access = await tokens.issue('access', claims, now, 600);
  const refresh = await tokens.issue('refresh', claims, now, 86_400);
  assert.equal(await tokens.verify('access', access, now), claims);
  assert.equal(await tokens.verify('refresh', refresh, now), claims);
  assert.is(await tokens.verify('refresh', access, now), null);
  assert.is(await tokens.verify('access', refresh, now), null);
});

test('headers and claims: HS256, typ, iss, aud, sub, acc, role, jti, iat, exp', async () => {
  const refresh = await tokens.issue('refresh', claims, now, 86_400);
  const [header, payload] = refresh
    .split('.')
    .slice(0, 2)
    .map((p) => JSON.parse(Buffer.from(p!, 'base64url').toString()));
  assert.equal(header, { alg: 'HS256', typ: 'refresh+jwt' });
  assert.equal(Object.keys(payload).sort(), ['acc', 'aud', 'exp', 'iat', 'iss', 'jti', 'role', 'sub']);
  assert.is(payload.exp - payload.iat, 86_400);
});

test('expiry follows the injected time', async () => {
  const access = await tokens.issue('access', claims, now, 60);
  assert.ok(await tokens.verify('access', access, new Date(now.getTime() + 59_000)));
  assert.is(await tokens.verify('access', access, new Date(now.getTime() + 60_000)), null);
});

test('forged, tampered and foreign tokens are all refused', async () => {
  assert.ok(await tokens.verify('access', await forge({}), now), 'the forge itself makes valid tokens');
  const unsecured = new UnsecuredJWT({ acc: 'a-1', role: 'partner' })
    .setIssuer('urn:partner-brand-api')
    .setAudience('urn:partner-brand-api:v3')
    .setSubject('c-1')
    .setIssuedAt(iat)
    .setExpirationTime(iat + 600)
    .encode();
  const valid = await forge({});
  const [h, p, s] = valid.split('.');
  const tampered = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), role: 'brand' })).toString('base64url')}.${s}`;
  const refused: [string, string | Promise<string>][] = [
    ['alg none', unsecured],
    ['wrong key', forge({ key: new TextEncoder().encode('x'.repeat(40)) })],
    ['HS512 with the right key', forge({ alg: 'HS512' })],
    ['tampered payload', tampered],
    ['expired', forge({ exp: iat - 1 })],
    ['refresh typ', forge({ typ: 'refresh+jwt' })],
    ['plain JWT typ', forge({ typ: 'JWT' })],
    ['wrong issuer', forge({ iss: 'urn:someone-else' })],
    ['wrong audience', forge({ aud: 'urn:partner-brand-api:token-endpoint' })],
    ['unknown role', forge({ payload: { role: 'admin' } })],
    ['garbage', 'not.a.jwt'],
    ['empty', ''],
  ];
  for (const [name, token] of refused) assert.is(await tokens.verify('access', await token, now), null, name);
});

test.run();
