import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { catchUp } from '../../examples/catch-up.ts';
import { verifyWebhook } from '../../examples/verify-webhook.ts';
import { listening } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { startReceiver } from '../support/receiver.ts';

// docs/integrators.md shows the files of examples/; this suite runs them against the real service.
const test = suite('the integrator guide\'s code runs as shown');
const root = join(import.meta.dirname, '..', '..');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;
let baseUrl: string;

test.before(async () => {
  app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '100ms' });
  app.worker.start();
  baseUrl = await listening(app);
});
test.after(() => app.worker.stop());

const configure = (accountId: string, url: string | null, signatureKey?: string) =>
  app.admin.call('webhookConfigs.upsert', { accountId, scope: 'brand', url, transformer: 'default', version: '1.3.0', ...(signatureKey && { signatureKey }) });
const createJob = async (brandId: string) => (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brandId })).apiId;

test('docs/integrators.md shows the example files exactly as they are', () => {
  const guide = readFileSync(join(root, 'docs', 'integrators.md'), 'utf8');
  const shown = [...guide.matchAll(/<!-- file: ([\w/.-]+) -->\n```ts\n([\s\S]*?)```/g)];
  assert.equal(shown.map((m) => m[1]), ['examples/verify-webhook.ts', 'examples/catch-up.ts']);
  for (const [, file, code] of shown) assert.fixture(code!, readFileSync(join(root, file!), 'utf8'), file);
});

test('verifyWebhook accepts real deliveries under both kinds of key, and refuses a changed body, a wrong key or a missing header', async () => {
  const receiver = await startReceiver();
  const keys = [`whsec_${Buffer.from(randomUUID()).toString('base64')}`, 'a-plain-signing-key-0123456789'];
  for (const key of keys) {
    const brand = await integrator(app, 'brand');
    await configure(brand.accountId, receiver.url(`/${brand.accountId}`), key);
    const apiId = await createJob(brand.accountId);
    const [delivery] = (await receiver.until((r) => r.some((x) => x.payload.orderId === apiId))).filter((x) => x.payload.orderId === apiId);
    const { body, headers } = delivery!;
    assert.equal(verifyWebhook(body, headers, key), JSON.parse(body));
    assert.throws(() => verifyWebhook(body.replace('"new"', '"cancelled"'), headers, key), /x-webhook-signature/);
    assert.throws(() => verifyWebhook(body, headers, `${key}x`), /x-webhook-signature/);
    const forged = { ...headers, 'x-webhook-signature': createHmac('sha256', key).update(body).digest('hex'), 'webhook-signature': 'v1,AAAA' };
    assert.throws(() => verifyWebhook(body, forged, key));
    const { 'webhook-signature': _, ...unsigned } = headers;
    assert.throws(() => verifyWebhook(body, unsigned, key), /webhook-signature/);
  }
});

test('catchUp after an outage: every event the endpoint missed, in order, then only what is new', async () => {
  let down = true;
  const receiver = await startReceiver(() => (down ? 503 : 200));
  const brand = await integrator(app, 'brand');
  await configure(brand.accountId, receiver.url('/brand'));
  const orders = [await createJob(brand.accountId), await createJob(brand.accountId)];
  for (const apiId of orders) await app.admin.call('jobs.setStatus', { apiId, status: 'open' });

  const handled: Record<string, unknown>[] = [];
  const cursor = await catchUp(baseUrl, brand.accessToken, null, async (event) => { handled.push(event); });
  assert.equal(handled.map((e) => [e.orderId, e.status]), [[orders[0], 'new'], [orders[1], 'new'], [orders[0], 'open'], [orders[1], 'open']]);
  assert.ok(cursor);
  down = false;

  await app.admin.call('jobs.setStatus', { apiId: orders[1], status: 'accepted' });
  const more: Record<string, unknown>[] = [];
  const later = await catchUp(baseUrl, brand.accessToken, cursor, async (event) => { more.push(event); });
  assert.equal(more.map((e) => [e.orderId, e.status]), [[orders[1], 'accepted']]);
  assert.is.not(later, cursor);
  assert.equal(await catchUp(baseUrl, brand.accessToken, later, async () => { throw new Error('nothing new to handle'); }), later);
});

test.run();
