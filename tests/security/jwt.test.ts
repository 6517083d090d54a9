import { createHmac, generateKeyPairSync, randomUUID } from 'node:crypto';
import { exportJWK, importPKCS8, type JWTHeaderParameters, SignJWT, UnsecuredJWT } from 'jose';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { JWT_SECRET } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';

// Token attacks (RFC 8725's list and the classic confusions), each against every kind of protected path: a partner
// read, a brand write, the feed, the command result, and the token endpoint with a refresh token. Every one must be
// a 401 problem; a forge of the same shape with the right key and claims passes, so each case fails for its attack.
const test = suite('JWT attacks');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;
let partner: Awaited<ReturnType<typeof integrator>>;
let brand: Awaited<ReturnType<typeof integrator>>;
const secret = new TextEncoder().encode(JWT_SECRET);
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();

test.before(async () => {
  app = await appWithMailbox();
  partner = await integrator(app, 'partner');
  brand = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: partner.accountId,
    scope: 'partner',
    url: null,
    transformer: 'partner-format',
    version: '1.3.0',
  });
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: null,
    transformer: 'default',
    version: '1.3.0',
  });
});

/** The `typ` the service expects of a token of this kind. */
const typOf = (token: string) => (claimsOf(token).aud === 'urn:partner-brand-api:v3' ? 'at+jwt' : 'refresh+jwt');
const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, string | number>;
const now = async () => Math.floor(Date.now() / 1000);

interface Forge {
  header?: Partial<JWTHeaderParameters>;
  key?: Uint8Array | Awaited<ReturnType<typeof importPKCS8>>;
  claims?: Record<string, unknown>;
  iat?: number;
  nbf?: number;
  exp?: number;
}
/** A token like the service's own for `token`'s contact, changed as told. */
async function forge(token: string, o: Forge = {}): Promise<string> {
  const c = claimsOf(token);
  const at = await now();
  const jwt = new SignJWT({ acc: c.acc, role: c.role, ...o.claims })
    .setProtectedHeader({ alg: 'HS256', typ: typOf(token), ...o.header } as JWTHeaderParameters)
    .setIssuer(String(c.iss))
    .setAudience(String(c.aud))
    .setSubject(String(c.sub))
    .setJti(randomUUID())
    .setIssuedAt(o.iat ?? at - 10)
    .setExpirationTime(o.exp ?? at + 600);
  if (o.nbf !== undefined) jwt.setNotBefore(o.nbf);
  return jwt.sign(o.key ?? secret);
}
/** HS256 over the header and claims with raw bytes as the key: how a confused verifier would check a token. */
function hmacToken(header: Record<string, unknown>, claims: Record<string, unknown>, key: string) {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const input = `${part(header)}.${part(claims)}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

/** The protected paths, each with the token it takes and the status that token gets when it is good. */
const paths = () => [
  {
    name: 'partner listing',
    ok: 200,
    token: partner.accessToken,
    call: (auth: string) => app.http.get('/v3/partner-orders/paginated').set('authorization', auth),
  },
  {
    name: 'brand command',
    ok: 202,
    token: brand.accessToken,
    call: (auth: string) =>
      app.http
        .post('/v3/commands')
        .set('authorization', auth)
        .send({ _v: '1.0.0', _cid: randomUUID(), _type: 'RefreshOrder', orderId: 'x' }),
  },
  {
    name: 'event feed',
    ok: 200,
    token: brand.accessToken,
    call: (auth: string) => app.http.get('/v3/events').set('authorization', auth),
  },
  {
    name: 'command result',
    ok: 404,
    token: partner.accessToken,
    call: (auth: string) => app.http.get(`/v3/commands/${randomUUID()}`).set('authorization', auth),
  },
  {
    name: 'token endpoint',
    ok: 200,
    token: partner.refreshToken,
    call: (auth: string) => app.http.post('/v3/auth/access-token').set('authorization', auth).send({}),
  },
];

async function refused(label: string, make: (token: string) => Promise<string> | string) {
  for (const path of paths()) {
    const res = await path.call(`Bearer ${await make(path.token)}`);
    assert.is(res.status, 401, `${label} on the ${path.name}: ${res.status} ${JSON.stringify(res.body)}`);
    assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
    assert.is(res.body.code, 'UNAUTHORIZED');
  }
}

test("the forge itself makes tokens every path accepts (so that each refusal below is its attack's)", async () => {
  for (const path of paths()) {
    const res = await path.call(`Bearer ${await forge(path.token)}`);
    assert.is(res.status, path.ok, `${path.name}: ${JSON.stringify(res.body)}`);
  }
});

test('alg none, and algorithms other than HS256 with the right secret', async () => {
  // Each with the right typ and claims, so that only the algorithm is wrong.
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  await refused('alg none', async (token) => {
    const [, payload] = (await forge(token)).split('.');
    return `${part({ alg: 'none', typ: typOf(token) })}.${payload}.`;
  });
  await refused('alg none with the signature kept', async (token) => {
    const [, payload, signature] = (await forge(token)).split('.');
    return `${part({ alg: 'none', typ: typOf(token) })}.${payload}.${signature}`;
  });
  await refused("alg None (jose's unsecured JWT)", async (token) => {
    const c = claimsOf(token);
    return new UnsecuredJWT({ acc: c.acc, role: c.role })
      .setIssuer(String(c.iss))
      .setAudience(String(c.aud))
      .setSubject(String(c.sub))
      .setJti(randomUUID())
      .setIssuedAt(await now())
      .setExpirationTime((await now()) + 600)
      .encode();
  });
  for (const alg of ['HS384', 'HS512']) await refused(alg, (token) => forge(token, { header: { alg } }));
});

test('HS/RS confusion: an RS256 token of another key, and HS256 keyed with a public key, are refused', async () => {
  const rsa = await importPKCS8(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 'RS256');
  await refused('RS256', (token) => forge(token, { header: { alg: 'RS256' }, key: rsa }));
  // The classic confusion: a verifier that takes the algorithm from the token checks HS256 with its RSA public key as
  // the secret. The service has no asymmetric key at all, so here this is one more wrong key; kept as the regression.
  await refused('HS256 keyed with a PEM public key', async (token) => {
    const c = claimsOf(token);
    const at = await now();
    return hmacToken(
      { alg: 'HS256', typ: typOf(token) },
      { ...c, jti: randomUUID(), iat: at, exp: at + 600 },
      publicPem,
    );
  });
});

test("kid, jku, jwk and x5u headers do not choose the key: a token signed with the attacker's key is refused", async () => {
  const attacker = new TextEncoder().encode('attacker-secret-0123456789-0123456789');
  const rsa = await importPKCS8(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 'RS256');
  const jwk = await exportJWK(publicKey);
  await refused('kid', (token) => forge(token, { header: { kid: 'attacker' }, key: attacker }));
  await refused('kid path traversal', (token) =>
    forge(token, { header: { kid: '../../../../dev/null' }, key: new Uint8Array(32) }),
  );
  // HS256 with the attacker's key, named by the header: the only thing wrong is the key the header asks for.
  const attackerJwk = { kty: 'oct', k: Buffer.from(attacker).toString('base64url') };
  await refused('jku', (token) =>
    forge(token, { header: { jku: 'https://attacker.example/jwks.json' }, key: attacker }),
  );
  await refused('embedded jwk', (token) => forge(token, { header: { jwk: attackerJwk as never }, key: attacker }));
  await refused('x5u', (token) =>
    forge(token, { header: { x5u: 'https://attacker.example/cert.pem' }, key: attacker }),
  );
  await refused('embedded RSA jwk, RS256', (token) => forge(token, { header: { alg: 'RS256', jwk }, key: rsa }));
});

test('typ swapped, iss or aud wrong, expired, not yet valid, claims tampered', async () => {
  await refused('typ swapped', (token) =>
    forge(token, { header: { typ: typOf(token) === 'at+jwt' ? 'refresh+jwt' : 'at+jwt' } }),
  );
  await refused('typ JWT', (token) => forge(token, { header: { typ: 'JWT' } }));
  await refused('iss', async (token) => {
    const c = claimsOf(token);
    return new SignJWT({ acc: c.acc, role: c.role })
      .setProtectedHeader({ alg: 'HS256', typ: typOf(token) })
      .setIssuer('urn:evil')
      .setAudience(String(c.aud))
      .setSubject(String(c.sub))
      .setJti(randomUUID())
      .setIssuedAt(await now())
      .setExpirationTime((await now()) + 600)
      .sign(secret);
  });
  await refused('aud of the other kind', async (token) => {
    const c = claimsOf(token);
    const other =
      c.aud === 'urn:partner-brand-api:v3' ? 'urn:partner-brand-api:token-endpoint' : 'urn:partner-brand-api:v3';
    return new SignJWT({ acc: c.acc, role: c.role })
      .setProtectedHeader({ alg: 'HS256', typ: typOf(token) })
      .setIssuer(String(c.iss))
      .setAudience(other)
      .setSubject(String(c.sub))
      .setJti(randomUUID())
      .setIssuedAt(await now())
      .setExpirationTime((await now()) + 600)
      .sign(secret);
  });
  await refused('expired', async (token) => forge(token, { exp: (await now()) - 1 }));
  await refused('not yet valid', async (token) => forge(token, { nbf: (await now()) + 300 }));
  await refused('role changed', (token) => forge(token, { claims: { role: 'admin' } }));
  await refused('account changed', (token) => forge(token, { claims: { acc: randomUUID() } }));
  // Only the signature can refuse these: the edit keeps every claim valid (a later expiry, another jti).
  await refused('payload edited (later exp), signature kept', async (token) => {
    const [h, , s] = token.split('.');
    return `${h}.${Buffer.from(JSON.stringify({ ...claimsOf(token), exp: Number(claimsOf(token).exp) + 3600 })).toString('base64url')}.${s}`;
  });
  await refused('payload edited (another jti), signature kept', async (token) => {
    const [h, , s] = token.split('.');
    return `${h}.${Buffer.from(JSON.stringify({ ...claimsOf(token), jti: randomUUID() })).toString('base64url')}.${s}`;
  });
});

test('a token of a contact that does not exist, or whose access was withdrawn, is refused', async () => {
  await refused('unknown contact', async (token) => {
    const c = claimsOf(token);
    return new SignJWT({ acc: c.acc, role: c.role })
      .setProtectedHeader({ alg: 'HS256', typ: typOf(token) })
      .setIssuer(String(c.iss))
      .setAudience(String(c.aud))
      .setSubject(randomUUID())
      .setJti(randomUUID())
      .setIssuedAt(await now())
      .setExpirationTime((await now()) + 600)
      .sign(secret);
  });
  await app.admin.call('contacts.setApiAccess', { contactId: partner.contactId, apiAccess: false });
  await app.admin.call('contacts.setApiAccess', { contactId: brand.contactId, apiAccess: false });
  try {
    await refused('withdrawn contact', (token) => token);
  } finally {
    await app.admin.call('contacts.setApiAccess', { contactId: partner.contactId, apiAccess: true });
    await app.admin.call('contacts.setApiAccess', { contactId: brand.contactId, apiAccess: true });
  }
});

test.run();
