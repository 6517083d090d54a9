import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { systemClock } from '../../adapters/system.ts';
import { type ResolveAll, UndiciWebhookSender } from '../../adapters/webhooks/sender.ts';
import { DnsWebhookTargetPolicy } from '../../adapters/webhooks/target-policy.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { startReceiver } from '../support/receiver.ts';

// Webhook targets on private addresses, with private targets NOT allowed (the tests' other apps allow them): refused
// when a configuration is saved, and again when a delivery connects, by what the name resolves to at that moment. The
// resolver of each check is the test's own, so that a DNS answer can change between the two (rebinding).
const test = suite('webhook targets: private addresses refused, at configuration and at delivery');
const PUBLIC = '93.184.216.34';
const HOST = 'hooks.rebinding.example';
// Names with a public and a loopback address, in both orders: every address is checked, not the first alone.
const MIXED: Record<string, string[]> = {
  'public-then-loopback.example': [PUBLIC, '127.0.0.1'],
  'loopback-then-public.example': ['127.0.0.1', PUBLIC],
  'public-then-v6-loopback.example': [PUBLIC, '::1'],
};
const connectResolver: ResolveAll = async (hostname) => {
  const addresses = hostname === HOST ? ['127.0.0.1'] : MIXED[hostname];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};
const sender = new UndiciWebhookSender({
  timeoutMs: 2000,
  allowPrivateTargets: false,
  connectionsPerOrigin: 4,
  clock: systemClock,
  resolveAll: connectResolver,
});
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;

test.before(async () => {
  app = await appWithMailbox(
    { WEBHOOK_ALLOW_PRIVATE_TARGETS: '0', WEBHOOK_RETRY_SCHEDULE: '1h' },
    {
      // At configuration the name is public (the first DNS answer of a rebinding attack) ...
      webhookTargets: new DnsWebhookTargetPolicy(false, async (host) =>
        host === HOST ? [PUBLIC] : (MIXED[host] ?? [host === 'localhost' ? '127.0.0.1' : PUBLIC]),
      ),
      // ... and when the delivery connects it is loopback.
      webhookSender: sender,
    },
  );
  app.worker.start();
});
test.after(async () => {
  await app.worker.stop();
  await sender.close();
});

const put = (token: string, url: string) =>
  app.http
    .put('/v3/webhook-config')
    .set('authorization', `Bearer ${token}`)
    .send({ url, transformer: 'default', version: '1.3.0' });

test('at configuration: loopback, private, link-local, metadata and mapped addresses, and a name that resolves to loopback, are 400', async () => {
  const brand = await integrator(app, 'brand');
  for (const url of [
    'http://127.0.0.1/x',
    'http://10.0.0.8/x',
    'http://192.168.1.1/x',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/x',
    'http://[::ffff:127.0.0.1]/x',
    'http://[::7f00:1]/x',
    'http://0.0.0.0/x',
    'http://100.64.0.1/x',
    'http://localhost/x',
  ]) {
    const res = await put(brand.accessToken, url);
    assert.equal([res.status, res.body.code], [400, 'BAD_REQUEST'], url);
  }
  assert.is(
    (await app.http.get('/v3/webhook-config').set('authorization', `Bearer ${brand.accessToken}`)).status,
    404,
    'nothing was saved',
  );
});

test('at configuration: a name that resolves to a public and a loopback address, in either order, is 400', async () => {
  const brand = await integrator(app, 'brand');
  for (const host of Object.keys(MIXED)) {
    const res = await put(brand.accessToken, `http://${host}/x`);
    assert.equal([res.status, res.body.code], [400, 'BAD_REQUEST'], host);
    assert.match(res.body.detail, /not public/, host);
  }
  assert.is(
    (await put(brand.accessToken, `http://${HOST}/x`)).status,
    200,
    'the same check lets a public-only name through',
  );
});

test('rebinding: a name public at configuration and loopback at delivery is refused when connecting; nothing reaches loopback', async () => {
  const receiver = await startReceiver();
  const brand = await integrator(app, 'brand');
  const saved = await put(brand.accessToken, `http://${HOST}:${receiver.port}/hooks`);
  assert.is(saved.status, 200, 'the name is public when the configuration is saved');
  const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
  let items: { eventId: string; attempts: { error: string | null; statusCode: number | null }[] }[] = [];
  let tries: (typeof items)[number]['attempts'] = [];
  for (let waited = 0; tries.length === 0; waited += 50) {
    assert.ok(waited < 10_000, 'the delivery was tried');
    const log = await app.http.get('/v3/webhook-deliveries').set('authorization', `Bearer ${brand.accessToken}`);
    items = log.body.items;
    tries = items.flatMap((d) => d.attempts);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(tries[0]!.statusCode, null);
  assert.match(tries[0]!.error ?? '', `refused target: ${HOST} resolves to 127.0.0.1, which is not a public address`);
  assert.is(receiver.received.length, 0, 'nothing reached the loopback receiver');
  const events = await app.services.unitOfWork().statements((d) => d.events.recentFor(brand.accountId, 10));
  assert.equal(
    events.map((e) => [e.id, e.type, e.orderId]),
    [[items[0]!.eventId, 'OrderStatusEvent', apiId]],
    "the refused delivery is the new order's event",
  );
});

test('the sender checks what the name resolves to when it connects: loopback is refused before any byte is sent', async () => {
  const receiver = await startReceiver();
  const refused = await sender.send({
    url: `http://${HOST}:${receiver.port}/x`,
    eventId: 'evt-rebind',
    body: '{}',
    signatureKeys: [],
  });
  assert.is(refused.statusCode, null);
  assert.match(refused.error ?? '', /^refused target/);
  assert.is(receiver.received.length, 0);
});

test('the sender refuses a name that resolves to a public and a loopback address, in either order; nothing reaches loopback', async () => {
  const receiver = await startReceiver();
  for (const [host, addresses] of Object.entries(MIXED)) {
    const loopback = addresses.find((a) => a === '127.0.0.1' || a === '::1')!;
    const refused = await sender.send({
      url: `http://${host}:${receiver.port}/x`,
      eventId: `evt-${host}`,
      body: '{}',
      signatureKeys: [],
    });
    assert.is(refused.statusCode, null, host);
    assert.is(refused.error, `refused target: ${host} resolves to ${loopback}, which is not a public address`, host);
  }
  assert.is(receiver.received.length, 0);
});

test.run();
