import { createHmac, randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { verifyWebhook } from '../../examples/verify-webhook.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { type Received, startReceiver } from '../support/receiver.ts';

// CONTRACT §11, key rotation, on the real app and database, the window moved by the test clock. The receivers verify
// with examples/verify-webhook.ts (the standardwebhooks library), which checks the timestamp against the real time:
// the clock is moved by a minute at a time here, well within its five minutes.
const test = suite('signature key rotation: both keys during the window, the new one only after it');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Who = Awaited<ReturnType<typeof integrator>>;
let app: App;
const OLD = 'the-old-signing-key-0123456789';
const NEW = 'the-new-signing-key-0123456789';
const NEWER = 'the-newer-signing-key-0123456789';

test.before(async () => {
  app = await appWithMailbox({ TEST_CLOCK: '1', WEBHOOK_RETRY_SCHEDULE: '100ms' });
  app.worker.start();
});
test.after(() => app.worker.stop());

const bearer = (who: Who) => `Bearer ${who.accessToken}`;
const getConfig = (who: Who) => app.http.get('/v3/webhook-config').set('authorization', bearer(who));
const putConfig = (who: Who, body: object) =>
  app.http
    .put('/v3/webhook-config')
    .set('authorization', bearer(who))
    .send({ transformer: 'partner-format', version: '1.3.0', ...body });
const rotate = (who: Who, body: object) =>
  app.http.post('/v3/webhook-config/rotate-key').set('authorization', bearer(who)).send(body);
/** Moves the service's clock on and answers its time. */
const advance = async (seconds: number) =>
  new Date((await app.admin.call<{ now: string }>('testClock.advance', { seconds })).now);
const verifiesWith = (key: string, delivery: Received) => {
  try {
    return verifyWebhook(delivery.body, delivery.headers, key)._eid === delivery.payload._eid;
  } catch {
    return false;
  }
};
const standardSignature = (key: string, d: Received) =>
  `v1,${createHmac('sha256', key).update(`${d.headers['webhook-id']}.${d.headers['webhook-timestamp']}.${d.body}`).digest('base64')}`;

test('deliveries: in the window a receiver knowing only the new key and one knowing only the old key both verify; after it only the new key does', async () => {
  const receiver = await startReceiver();
  const brand = await integrator(app, 'brand');
  const configured = await putConfig(brand, {
    url: receiver.url(`/${brand.accountId}`),
    transformer: 'default',
    signatureKey: OLD,
  });
  assert.is(configured.status, 200, JSON.stringify(configured.body));
  assert.is(configured.body.previousKeyExpiresAt, null);
  const delivered = async () => {
    const apiId = (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId })).apiId;
    return (await receiver.until((r) => r.some((x) => x.payload.orderId === apiId))).find(
      (x) => x.payload.orderId === apiId,
    )!;
  };

  const now = await advance(1);
  const rotated = await rotate(brand, { signatureKey: NEW, previousKeyValidFor: 60 });
  assert.is(rotated.status, 200, JSON.stringify(rotated.body));
  assert.equal(rotated.body, { ...configured.body, previousKeyExpiresAt: rotated.body.previousKeyExpiresAt });
  const expiresAt = Date.parse(rotated.body.previousKeyExpiresAt);
  assert.ok(
    expiresAt - now.getTime() >= 60_000 && expiresAt - now.getTime() < 65_000,
    `the window ends a minute from now: ${rotated.body.previousKeyExpiresAt}`,
  );
  assert.equal((await getConfig(brand)).body, rotated.body, 'GET shows what the rotation answered');
  assert.not.match(JSON.stringify(rotated.body), /signing-key/, 'no key is ever shown');

  const during = await delivered();
  assert.equal(
    [verifiesWith(NEW, during), verifiesWith(OLD, during), verifiesWith(NEWER, during)],
    [true, true, false],
  );
  assert.is(
    during.headers['webhook-signature'],
    `${standardSignature(NEW, during)} ${standardSignature(OLD, during)}`,
    "two signatures, the new key's first",
  );
  assert.is(
    during.headers['x-webhook-signature'],
    createHmac('sha256', NEW).update(during.body).digest('hex'),
    'x-webhook-signature: the new key',
  );
  const tried = await app.http.post('/v3/webhook-config/test').set('authorization', bearer(brand)).send({});
  assert.is(tried.body.delivered, true);
  const testEvent = receiver.received.filter((r) => r.payload._type === 'WebhookTestEvent').at(-1)!;
  assert.equal(
    [verifiesWith(NEW, testEvent), verifiesWith(OLD, testEvent)],
    [true, true],
    'the endpoint test signs as deliveries do',
  );

  await advance(61);
  assert.is((await getConfig(brand)).body.previousKeyExpiresAt, null, 'the window has ended');
  const after = await delivered();
  assert.equal([verifiesWith(NEW, after), verifiesWith(OLD, after)], [true, false]);
  assert.is(after.headers['webhook-signature'], standardSignature(NEW, after), 'one signature');
});

/** Where the partners' events go: answered, and not looked at. */
let sink = '';
async function partnerWithJob(key: string | null) {
  sink ||= (await startReceiver()).url('/partners');
  const brand = await integrator(app, 'brand');
  const partner = await integrator(app, 'partner');
  const put = await putConfig(partner, { url: sink, signatureKey: key });
  assert.is(put.status, 200, JSON.stringify(put.body));
  const job = await app.admin.call<{ apiId: string }>('jobs.create', {
    brandAccountId: brand.accountId,
    partnerId: partner.accountId,
    status: 'accepted',
  });
  /** SetJobYourOrderId for the partner's job, signed with `signingKey`: answers the status. */
  const command = async (signingKey: string) => {
    const raw = JSON.stringify({
      _v: '1.0.0',
      _cid: randomUUID(),
      _type: 'SetJobYourOrderId',
      jobApiId: job.apiId,
      yourOrderID: `ref-${randomUUID().slice(0, 8)}`,
    });
    const res = await app.http
      .post('/v3/commands/partner/your-order-id')
      .set('authorization', bearer(partner))
      .set('content-type', 'application/json')
      .set('x-webhook-signature', createHmac('sha256', signingKey).update(raw).digest('hex'))
      .send(raw);
    return res.status;
  };
  return { partner, command };
}

test('partner commands: signed with the old key accepted in the window and refused (401) after it; the new key throughout', async () => {
  const { partner, command } = await partnerWithJob(OLD);
  assert.is((await rotate(partner, { signatureKey: NEW, previousKeyValidFor: 60 })).status, 200);
  assert.equal([await command(OLD), await command(NEW), await command(NEWER)], [200, 200, 401]);
  await advance(61);
  assert.equal([await command(OLD), await command(NEW)], [401, 200]);
});

test('two rotations at once chain: one key is the current, the other the previous; the first key counts no more', async () => {
  const { partner, command } = await partnerWithJob(OLD);
  const statuses = await Promise.all([
    rotate(partner, { signatureKey: NEW }),
    rotate(partner, { signatureKey: NEWER }),
  ]);
  assert.equal(
    statuses.map((r) => r.status),
    [200, 200],
  );
  assert.equal([await command(OLD), await command(NEW), await command(NEWER)], [401, 200, 200], 'neither new key lost');
});

test('a PUT with a signatureKey member ends the window at once; one without it keeps the window', async () => {
  const { partner, command } = await partnerWithJob(OLD);
  assert.is((await rotate(partner, { signatureKey: NEW })).status, 200, 'the window is a day by default');
  const kept = await putConfig(partner, { url: sink });
  assert.ok(kept.body.previousKeyExpiresAt, 'a PUT without signatureKey keeps the window');
  assert.is(await command(OLD), 200);
  const replaced = await putConfig(partner, { url: sink, signatureKey: NEWER });
  assert.equal([replaced.status, replaced.body.previousKeyExpiresAt], [200, null]);
  assert.equal(
    [await command(OLD), await command(NEW), await command(NEWER)],
    [401, 401, 200],
    'only the key just set counts',
  );
  assert.is((await rotate(partner, { signatureKey: NEW })).status, 200);
  const removed = await putConfig(partner, { url: sink, signatureKey: null });
  assert.equal([removed.body.hasSignatureKey, removed.body.previousKeyExpiresAt], [false, null]);
});

test("refusals: rotating without a key is 409, without a configuration of one's own 404; a bad key or window 400, nothing changed", async () => {
  const keyless = await partnerWithJob(null);
  const conflict = await rotate(keyless.partner, { signatureKey: NEW });
  assert.equal([conflict.status, conflict.body.code], [409, 'CONFLICT']);
  assert.match(conflict.body.detail, /PUT \/v3\/webhook-config/);
  const child = await integrator(app, 'partner', (await partnerWithJob(OLD)).partner.accountId);
  assert.equal(
    [(await rotate(child, { signatureKey: NEW })).status, (await getConfig(child)).status],
    [404, 404],
    'a child rotates its own configuration, as it reads it',
  );

  const { partner, command } = await partnerWithJob(OLD);
  for (const [body, path] of [
    [{ signatureKey: 'short' }, 'signatureKey'],
    [{ signatureKey: NEW, asymmetric: true }, 'asymmetric'],
    [{ signatureKey: NEW, previousKeyValidFor: 604_801 }, 'previousKeyValidFor'],
    [{ signatureKey: NEW, previousKeyValidFor: -1 }, 'previousKeyValidFor'],
    [{ signatureKey: NEW, previousKeyValidFor: '60' }, 'previousKeyValidFor'],
    [{ signatureKey: NEW, extra: 1 }, ''],
  ] as const) {
    const res = await rotate(partner, body);
    assert.equal([res.status, res.body.code], [400, 'BAD_REQUEST'], JSON.stringify(body));
    if (path)
      assert.ok(
        res.body.issues.some((i: { path: string }) => i.path === path),
        `${JSON.stringify(body)}: ${JSON.stringify(res.body.issues)}`,
      );
  }
  assert.equal([await command(OLD), await command(NEW)], [200, 401], 'nothing changed');
  assert.is((await app.http.post('/v3/webhook-config/rotate-key').send({ signatureKey: NEW })).status, 401);
  const longest = await rotate(partner, { signatureKey: NEW, previousKeyValidFor: 604_800 });
  assert.is(longest.status, 200, 'a week is the longest window');
});

test('admin.webhookConfigs.rotateKey: the same rotation for any account and scope, answered as the configuration; 409 without a key', async () => {
  const { partner, command } = await partnerWithJob(OLD);
  const view = await app.admin.call<Record<string, unknown>>('webhookConfigs.rotateKey', {
    accountId: partner.accountId,
    scope: 'partner',
    signatureKey: NEW,
    previousKeyValidFor: 120,
  });
  const { accountId, ...rest } = view;
  assert.equal([accountId, rest], [partner.accountId, (await getConfig(partner)).body]);
  assert.equal([await command(OLD), await command(NEW)], [200, 200]);
  const keyless = await partnerWithJob(null);
  const refused = await app.admin.mutate('webhookConfigs.rotateKey', {
    accountId: keyless.partner.accountId,
    scope: 'partner',
    signatureKey: NEW,
  });
  assert.equal([refused.status, refused.body.error.data.code], [409, 'CONFLICT']);
});

test.run();
