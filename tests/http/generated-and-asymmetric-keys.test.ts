import { createPublicKey, verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { verifyAsymmetricWebhook } from '../../examples/verify-webhook.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { type Received, startReceiver } from '../support/receiver.ts';

// CONTRACT §11: keys made for the integrator (rotate-key without a key), and asymmetric signatures (Standard Webhooks
// v1a, Ed25519) that receivers verify with a public key, rotated with a window as HMAC keys are.
type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Json = Record<string, any>;
const test = suite('keys made for you and asymmetric signatures');
let app: App;
test.before(async () => {
  app = await appWithMailbox({ TEST_CLOCK: '1' });
  app.worker.start();
});
test.after(() => app.worker.stop());

const GENERATED = /^whsec_[A-Za-z0-9+/]{43}=$/;
const PUBLIC_KEY = /^whpk_[A-Za-z0-9+/]{43}=$/;

async function brandWithEndpoint(signatureKey: string | null = 'the-brand-key-0123456789') {
  const receiver = await startReceiver();
  const brand = await integrator(app, 'brand');
  const auth = `Bearer ${brand.accessToken}`;
  const put = (body: Json) =>
    app.http
      .put('/v3/webhook-config')
      .set('authorization', auth)
      .send({ url: receiver.url(), transformer: 'default', version: '1.3.0', ...body });
  assert.is((await put({ signatureKey })).status, 200);
  const rotate = (body: Json) => app.http.post('/v3/webhook-config/rotate-key').set('authorization', auth).send(body);
  const config = async () => (await app.http.get('/v3/webhook-config').set('authorization', auth)).body as Json;
  /** Makes an order, and answers the delivery of its event once it has arrived. */
  const delivered = async () => {
    const before = receiver.received.length;
    await app.admin.call('jobs.create', { brandAccountId: brand.accountId });
    return (await receiver.until((got) => got.length > before, 10_000, 'the delivery'))[before]!;
  };
  return { brand, receiver, put, rotate, config, delivered };
}

/** The v1a signatures of a delivery that verify with the public key `whpk_…`. */
function v1aVerifiedBy(publicKey: string, r: Received) {
  const key = createPublicKey({
    key: {
      kty: 'OKP',
      crv: 'Ed25519',
      x: Buffer.from(publicKey.slice('whpk_'.length), 'base64').toString('base64url'),
    },
    format: 'jwk',
  });
  const signed = Buffer.from(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`);
  return String(r.headers['webhook-signature'])
    .split(' ')
    .filter((s) => s.startsWith('v1a,'))
    .filter((s) => verify(null, signed, key, Buffer.from(s.slice('v1a,'.length), 'base64'))).length;
}

test('rotate-key without a key makes one, answered once: whsec_ and 32 random bytes, the old key valid for the window', async () => {
  const { rotate, config, delivered } = await brandWithEndpoint();
  const res = await rotate({ previousKeyValidFor: 3600 });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.match(res.body.signatureKey, GENERATED);
  assert.is(Buffer.from(res.body.signatureKey.slice('whsec_'.length), 'base64').length, 32);
  assert.equal([res.body.hasSignatureKey, typeof res.body.previousKeyExpiresAt], [true, 'string']);
  assert.is((await config()).signatureKey, undefined, 'never shown again');
  const arrived = await delivered();
  assert.ok(
    new Webhook(res.body.signatureKey).verify(arrived.body, arrived.headers as Record<string, string>),
    "a receiver's library verifies with it",
  );
  assert.is(
    String(arrived.headers['webhook-signature']).split(' ').length,
    2,
    'the old key signs too while its window lasts',
  );
  const other = await rotate({});
  assert.not.equal(other.body.signatureKey, res.body.signatureKey, 'each key made afresh');
  assert.is(res.headers['cache-control'], 'no-store', 'no cache on the way keeps the key');
});

test('rotate-key with no body at all makes a key, as the document says (its body is optional)', async () => {
  const { brand } = await brandWithEndpoint();
  const bare = await app.http.post('/v3/webhook-config/rotate-key').set('authorization', `Bearer ${brand.accessToken}`);
  assert.equal(
    [bare.status, GENERATED.test(bare.body.signatureKey), bare.headers['cache-control']],
    [200, true, 'no-store'],
    JSON.stringify(bare.body),
  );
  const operation = (await app.http.get('/openapi.json')).body.paths['/v3/webhook-config/rotate-key'].post;
  assert.is(operation.requestBody.required, false);
});

test('an endpoint without a key takes the key made at once, with no previous one', async () => {
  const { rotate, delivered } = await brandWithEndpoint(null);
  const res = await rotate({});
  assert.equal([res.status, res.body.hasSignatureKey, res.body.previousKeyExpiresAt], [200, true, null]);
  const arrived = await delivered();
  assert.ok(new Webhook(res.body.signatureKey).verify(arrived.body, arrived.headers as Record<string, string>));
  assert.is(String(arrived.headers['webhook-signature']).split(' ').length, 1);
});

test('asymmetric signing: a public key to verify v1a signatures with, after the v1 ones; without a key, v1a alone', async () => {
  const { put, config, delivered, rotate } = await brandWithEndpoint();
  assert.equal([(await config()).asymmetricSigning, (await config()).publicKey], [false, null]);
  const on = await put({ asymmetricSigning: true });
  assert.match(on.body.publicKey, PUBLIC_KEY);
  assert.equal([on.body.asymmetricSigning, on.body.previousPublicKey], [true, null]);
  const arrived = await delivered();
  const parts = String(arrived.headers['webhook-signature']).split(' ');
  assert.equal(
    parts.map((p) => p.split(',')[0]),
    ['v1', 'v1a'],
  );
  assert.is(v1aVerifiedBy(on.body.publicKey, arrived), 1);
  assert.ok(arrived.headers['x-webhook-signature'], 'the HMAC of the body as before');
  const keyless = await put({ signatureKey: null });
  assert.is(keyless.body.publicKey, on.body.publicKey, 'the pair stays');
  const unsignedByHmac = await delivered();
  assert.equal(
    [String(unsignedByHmac.headers['webhook-signature']).split(',')[0], unsignedByHmac.headers['x-webhook-signature']],
    ['v1a', undefined],
  );
  assert.is(v1aVerifiedBy(on.body.publicKey, unsignedByHmac), 1);
  const off = await put({ asymmetricSigning: false });
  assert.equal([off.body.publicKey, off.body.asymmetricSigning], [null, false]);
  assert.is((await delivered()).headers['webhook-signature'], undefined, 'no key, no pair: unsigned');
  assert.is(
    (await put({ asymmetricSigning: true })).body.publicKey,
    on.body.publicKey,
    'turned on again, the same pair',
  );
  const absent = await put({});
  assert.is(absent.body.asymmetricSigning, true, 'absent keeps the setting');
  const conflict = await put({ asymmetricSigning: false }).then(() => rotate({ asymmetric: true }));
  assert.equal([conflict.status, conflict.body.code], [409, 'CONFLICT']);
  assert.match(conflict.body.detail, /asymmetricSigning: true/);
});

test('rotate-key with asymmetric: a new pair; both sign for the window, new first; then the new one alone', async () => {
  const { put, rotate, config, delivered } = await brandWithEndpoint(null);
  const first = (await put({ asymmetricSigning: true })).body.publicKey as string;
  const res = await rotate({ asymmetric: true, previousKeyValidFor: 60 });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.match(res.body.publicKey, PUBLIC_KEY);
  assert.not.equal(res.body.publicKey, first);
  assert.equal([res.body.previousPublicKey, res.body.signatureKey], [first, undefined]);
  const during = await delivered();
  assert.equal([v1aVerifiedBy(res.body.publicKey, during), v1aVerifiedBy(first, during)], [1, 1]);
  assert.is(String(during.headers['webhook-signature']).split(' ').length, 2);
  assert.ok(
    v1aVerifiedBy(res.body.publicKey, {
      ...during,
      headers: { ...during.headers, 'webhook-signature': String(during.headers['webhook-signature']).split(' ')[0] },
    }),
  );
  await app.admin.call('testClock.advance', { seconds: 61 });
  assert.is((await config()).previousPublicKey, null, 'its window ended');
  const after = await delivered();
  assert.equal([v1aVerifiedBy(res.body.publicKey, after), v1aVerifiedBy(first, after)], [1, 0]);
  const hmac = await rotate({});
  assert.equal(
    [hmac.status, hmac.body.previousPublicKey],
    [200, null],
    'a later rotation answers as GET shows it: the ended window is gone',
  );
  const both = await rotate({ asymmetric: true, signatureKey: 'another-key-0123456789' });
  assert.equal([both.status, both.body.issues?.[0]?.path], [400, 'asymmetric']);
});

test('the endpoint test signs as deliveries do; admin upsert and rotateKey alike; no private key in any answer', async () => {
  const { brand, put, rotate, receiver } = await brandWithEndpoint();
  const { publicKey } = (await put({ asymmetricSigning: true })).body;
  const tested = await app.http
    .post('/v3/webhook-config/test')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({});
  assert.is(tested.body.delivered, true);
  assert.is(v1aVerifiedBy(publicKey, receiver.received.at(-1)!), 1);
  const admin = await app.admin.call<Json>('webhookConfigs.rotateKey', { accountId: brand.accountId, scope: 'brand' });
  assert.match(admin.signatureKey, GENERATED);
  const adminPair = await app.admin.call<Json>('webhookConfigs.rotateKey', {
    accountId: brand.accountId,
    scope: 'brand',
    asymmetric: true,
  });
  assert.equal([adminPair.previousPublicKey, adminPair.signatureKey], [publicKey, undefined]);
  const other = await app.admin.call<{ id: string }>('accounts.create', { name: 'Admin pair', role: 'brand' });
  const upserted = await app.admin.call<Json>('webhookConfigs.upsert', {
    accountId: other.id,
    scope: 'brand',
    transformer: 'default',
    version: '1.3.0',
    asymmetricSigning: true,
  });
  assert.match(upserted.publicKey, PUBLIC_KEY);
  const answers = [
    JSON.stringify(admin),
    JSON.stringify(adminPair),
    JSON.stringify(upserted),
    JSON.stringify((await rotate({ asymmetric: true })).body),
  ];
  for (const text of answers)
    assert.not.match(text, /MC4CAQAwBQYDK2VwBCIEI/, 'a PKCS8 Ed25519 private key never leaves');
});

test('examples/verify-webhook.ts verifies v1a with the public key alone, and refuses a changed body, another key, a forgery, a late replay', async () => {
  const { put, delivered, rotate } = await brandWithEndpoint(null);
  const { publicKey } = (await put({ asymmetricSigning: true })).body;
  const { body, headers } = await delivered();
  assert.equal(verifyAsymmetricWebhook(body, headers, publicKey), JSON.parse(body));
  assert.throws(
    () => verifyAsymmetricWebhook(body.replace('"new"', '"cancelled"'), headers, publicKey),
    /No matching v1a signature/,
  );
  const other = (await rotate({ asymmetric: true, previousKeyValidFor: 0 })).body.publicKey;
  assert.throws(
    () => verifyAsymmetricWebhook(body, headers, other),
    /No matching v1a signature/,
    "another pair's public key",
  );
  assert.throws(
    () =>
      verifyAsymmetricWebhook(
        body,
        { ...headers, 'webhook-signature': `v1a,${Buffer.alloc(64).toString('base64')}` },
        publicKey,
      ),
    /No matching/,
  );
  assert.throws(
    () =>
      verifyAsymmetricWebhook(
        body,
        { ...headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 600) },
        publicKey,
      ),
    /timestamp/,
  );
  const fresh = await delivered();
  assert.equal(
    verifyAsymmetricWebhook(fresh.body, fresh.headers, other),
    JSON.parse(fresh.body),
    "the new pair's deliveries verify with its key",
  );
});

test.run();
