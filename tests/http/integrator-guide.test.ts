import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { catchUp } from '../../examples/catch-up.ts';
import { EVENT_TYPES, tryEveryEventType } from '../../examples/example-events.ts';
import { rotateSignatureKey } from '../../examples/rotate-key.ts';
import { verifyWebhook } from '../../examples/verify-webhook.ts';
import { integrator } from '../support/integrators.ts';
import { startReceiver } from '../support/receiver.ts';
import { app, baseUrl, createJob, withGuideApp } from './integrator-guide/support.ts';

// docs/integrators.md shows the files of examples/; this suite checks that it does, and runs the webhook examples
// against the real service (integrator-guide/api-client.test.ts runs the API client).
const test = suite("the integrator guide's code runs as shown");
const root = join(import.meta.dirname, '..', '..');
withGuideApp(test);

const configure = (accountId: string, url: string | null, signatureKey?: string) =>
  app.admin.call('webhookConfigs.upsert', {
    accountId,
    scope: 'brand',
    url,
    transformer: 'default',
    version: '1.3.0',
    ...(signatureKey && { signatureKey }),
  });

test('docs/integrators.md shows the example files exactly as they are', () => {
  const guide = readFileSync(join(root, 'docs', 'integrators.md'), 'utf8');
  const shown = [...guide.matchAll(/<!-- file: ([\w/.-]+) -->\n```ts\n([\s\S]*?)```/g)];
  assert.equal(
    shown.map((m) => m[1]),
    [
      'examples/api-client.ts',
      'examples/first-steps.ts',
      'examples/verify-webhook.ts',
      'examples/rotate-key.ts',
      'examples/catch-up.ts',
      'examples/example-events.ts',
      'examples/endpoint-health.ts',
      'examples/delivery-detail.ts',
    ],
  );
  for (const [, file, code] of shown) assert.fixture(code!, readFileSync(join(root, file!), 'utf8'), file);
});

test('verifyWebhook accepts real deliveries under both kinds of key, and refuses a changed body, a wrong key, a forged or missing signature, a late replay', async () => {
  const receiver = await startReceiver();
  const keys = [
    `whsec_${Buffer.from(randomUUID()).toString('base64')}`,
    'a-plain-signing-key-0123456789',
    'ein-schlüssel-mit-umlaut-0123456789',
  ];
  for (const key of keys) {
    const brand = await integrator(app, 'brand');
    await configure(brand.accountId, receiver.url(`/${brand.accountId}`), key);
    const apiId = await createJob(brand.accountId);
    const [delivery] = (await receiver.until((r) => r.some((x) => x.payload.orderId === apiId))).filter(
      (x) => x.payload.orderId === apiId,
    );
    const { body, headers } = delivery!;
    assert.equal(verifyWebhook(body, headers, key), JSON.parse(body));
    assert.throws(() => verifyWebhook(body.replace('"new"', '"cancelled"'), headers, key), /No matching signature/);
    // (A character added to a whsec_ key may decode to the same bytes: another key is another key's bytes.)
    const wrong = key.startsWith('whsec_') ? `whsec_${Buffer.from(randomUUID()).toString('base64')}` : `${key}x`;
    assert.throws(() => verifyWebhook(body, headers, wrong), /No matching signature/);
    const forged = {
      ...headers,
      'x-webhook-signature': createHmac('sha256', key).update(body).digest('hex'),
      'webhook-signature': 'v1,AAAA',
    };
    assert.throws(() => verifyWebhook(body, forged, key), /No matching signature/);
    const stale = { ...headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 600) };
    assert.throws(() => verifyWebhook(body, stale, key), /timestamp/i, 'a replay ten minutes late is refused');
    const { 'webhook-signature': _, ...unsigned } = headers;
    assert.throws(() => verifyWebhook(body, unsigned, key), /webhook-signature/);
  }
});

test('rotateSignatureKey: during the window verifyWebhook accepts a delivery with the old key and with the new; without a key it fails with the 409', async () => {
  const receiver = await startReceiver();
  const brand = await integrator(app, 'brand');
  const oldKey = 'guide-old-signing-key-0123456789';
  const newKey = randomBytes(32).toString('base64url');
  await configure(brand.accountId, receiver.url(`/${brand.accountId}`), oldKey);
  const ends = await rotateSignatureKey(baseUrl, brand.accessToken, newKey, 3600);
  assert.ok(ends && Date.parse(ends) - Date.now() > 3_500_000, `the old key ends in an hour: ${ends}`);
  const apiId = await createJob(brand.accountId);
  const [delivery] = (await receiver.until((r) => r.some((x) => x.payload.orderId === apiId))).filter(
    (x) => x.payload.orderId === apiId,
  );
  assert.equal(
    [
      verifyWebhook(delivery!.body, delivery!.headers, oldKey),
      verifyWebhook(delivery!.body, delivery!.headers, newKey),
    ],
    [JSON.parse(delivery!.body), JSON.parse(delivery!.body)],
  );

  const keyless = await integrator(app, 'brand');
  await configure(keyless.accountId, null);
  await rotateSignatureKey(baseUrl, keyless.accessToken, newKey).then(
    () => assert.unreachable('rotated without a key'),
    (error: Error) => assert.match(error.message, /answered 409: .*CONFLICT/),
  );
});

test('tryEveryEventType: the receiver gets and verifies one example of each type, marked webhook-test: 1; the outcomes say delivered', async () => {
  const receiver = await startReceiver();
  const brand = await integrator(app, 'brand');
  const key = 'guide-examples-key-0123456789';
  await configure(brand.accountId, receiver.url(`/${brand.accountId}`), key);
  const outcomes = await tryEveryEventType(baseUrl, brand.accessToken);
  assert.equal(Object.keys(outcomes), [...EVENT_TYPES]);
  assert.ok(
    Object.values(outcomes).every((o) => o.delivered && o.statusCode === 200),
    JSON.stringify(outcomes),
  );
  assert.equal(
    receiver.received.map((r) => [verifyWebhook(r.body, r.headers, key)._type, r.headers['webhook-test']]),
    EVENT_TYPES.map((t) => [t, '1']),
  );
  await tryEveryEventType(baseUrl, brand.accessToken); // tests 6 to 10 of the minute
  await tryEveryEventType(baseUrl, brand.accessToken).then(
    () => assert.unreachable('more than 10 tests a minute'),
    (error: Error) => assert.match(error.message, /answered 429/),
  );
});

test('catchUp after an outage: every event the endpoint missed, in order, then only what is new', async () => {
  let down = true;
  const receiver = await startReceiver(() => (down ? 503 : 200));
  const brand = await integrator(app, 'brand');
  await configure(brand.accountId, receiver.url('/brand'));
  const orders = [await createJob(brand.accountId), await createJob(brand.accountId)];
  for (const apiId of orders) await app.admin.call('jobs.setStatus', { apiId, status: 'open' });

  const handled: Record<string, unknown>[] = [];
  const cursor = await catchUp(baseUrl, brand.accessToken, null, async (event) => {
    handled.push(event);
  });
  assert.equal(
    handled.map((e) => [e.orderId, e.status]),
    [
      [orders[0], 'new'],
      [orders[1], 'new'],
      [orders[0], 'open'],
      [orders[1], 'open'],
    ],
  );
  assert.ok(cursor);
  down = false;

  await app.admin.call('jobs.setStatus', { apiId: orders[1], status: 'accepted' });
  const more: Record<string, unknown>[] = [];
  const later = await catchUp(baseUrl, brand.accessToken, cursor, async (event) => {
    more.push(event);
  });
  assert.equal(
    more.map((e) => [e.orderId, e.status]),
    [[orders[1], 'accepted']],
  );
  assert.is.not(later, cursor);
  assert.equal(
    await catchUp(baseUrl, brand.accessToken, later, async () => {
      throw new Error('nothing new to handle');
    }),
    later,
  );
});

test.run();
