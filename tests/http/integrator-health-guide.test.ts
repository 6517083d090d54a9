import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { explainDelivery } from '../../examples/delivery-detail.ts';
import { healEndpoint } from '../../examples/endpoint-health.ts';
import { loadConfig } from '../../server/config.ts';
import { listening } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { startReceiver } from '../support/receiver.ts';

// docs/integrators.md, "When your endpoint fails" and "What we sent and what you answered": their examples run against
// the real service (integrator-guide.test.ts checks that the guide shows them as they are).
const test = suite("the integrator guide's endpoint health and delivery detail examples run as shown");
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;
let baseUrl: string;

test.before(async () => {
  // Failing for a second is enough to be disabled here; each delivery fails after two tries 100 ms apart.
  app = await appWithMailbox({
    WEBHOOK_RETRY_SCHEDULE: '100ms',
    WEBHOOK_DISABLE_AFTER: '1s',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  app.worker.start();
  baseUrl = await listening(app);
});
test.after(() => app.worker.stop());

const statuses = async (accountId: string) =>
  (await app.admin.query<{ items: { status: string }[] }>('deliveries.list', { accountId })).items.map((d) => d.status);
async function until(check: () => Promise<boolean>, what: string) {
  for (const deadline = Date.now() + 10_000; !(await check()); ) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('healEndpoint: nothing to heal while healthy; after it was disabled for failing, enables it and sends every failed delivery again', async () => {
  let answer = 500;
  const receiver = await startReceiver(() => answer);
  const brand = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: receiver.url(),
    transformer: 'default',
    version: '1.3.0',
  });
  assert.is(await healEndpoint(baseUrl, brand.accessToken), 0, 'healthy: nothing to do');

  await app.admin.call('jobs.create', { brandAccountId: brand.accountId });
  await until(async () => (await statuses(brand.accountId)).includes('failed'), 'the first delivery failed');
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await app.admin.call('jobs.create', { brandAccountId: brand.accountId });
  await until(
    async () => (await statuses(brand.accountId)).filter((s) => s === 'failed').length === 2,
    'the second delivery failed',
  );
  const disabled = await app.http.get('/v3/webhook-config').set('authorization', `Bearer ${brand.accessToken}`);
  assert.equal([disabled.body.enabled, disabled.body.disabledReason], [false, 'failing']);

  answer = 200;
  assert.is(await healEndpoint(baseUrl, brand.accessToken), 2);
  await until(async () => (await statuses(brand.accountId)).every((s) => s === 'delivered'), 'the backlog delivered');
  const healed = await app.http.get('/v3/webhook-config').set('authorization', `Bearer ${brand.accessToken}`);
  assert.equal([healed.body.enabled, healed.body.disabledReason, healed.body.failingSince], [true, null, null]);
  assert.is(await healEndpoint(baseUrl, brand.accessToken), 0, 'healed: nothing more to do');
});

test('explainDelivery: each try, which of the keys signed it, and the start of the answer', async () => {
  let answer = 503;
  const receiver = await startReceiver(() => answer);
  const brand = await integrator(app, 'brand');
  const key = `whsec_${Buffer.from('the-current-signing-key-bytes').toString('base64')}`;
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: receiver.url(),
    transformer: 'default',
    version: '1.3.0',
    signatureKey: key,
  });
  await app.admin.call('jobs.create', { brandAccountId: brand.accountId });
  await until(async () => (await statuses(brand.accountId))[0] === 'failed', 'the delivery failed');
  const [delivery] = (
    await app.admin.query<{ items: { id: string }[] }>('deliveries.list', { accountId: brand.accountId })
  ).items;
  answer = 200;

  const tries = await explainDelivery(baseUrl, brand.accessToken, delivery!.id, ['an-old-key-0123456789', key]);
  assert.is(tries.length, 2);
  for (const t of tries) {
    assert.equal([t.statusCode, t.signedWith], [503, 1]);
    assert.match(t.answer!, /^failure 503 /);
  }
  assert.equal(
    (await explainDelivery(baseUrl, brand.accessToken, delivery!.id, ['an-old-key-0123456789'])).map(
      (t) => t.signedWith,
    ),
    [null, null],
  );
  const other = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: other.accountId,
    scope: 'brand',
    url: receiver.url('/other'),
    transformer: 'default',
    version: '1.3.0',
  });
  try {
    await explainDelivery(baseUrl, other.accessToken, delivery!.id, [key]);
    assert.unreachable("another account's delivery");
  } catch (error) {
    assert.match((error as Error).message, /answered 404/);
  }
});

test("healEndpoint's note on the retries states the service's default schedule and its span, which its margin covers", () => {
  const source = readFileSync(new URL('../../examples/endpoint-health.ts', import.meta.url), 'utf8');
  const [, hours, minutes, listed] =
    /attempts\s+\*?\s*span (\d+) h (\d+) min \(WEBHOOK_RETRY_SCHEDULE ([^)]+)\)/.exec(source) ?? [];
  const schedule = loadConfig({}).webhookRetryScheduleMs;
  const spanMs = schedule.reduce((sum, ms) => sum + ms, 0);
  assert.equal(
    [Number(hours), Number(minutes)],
    [Math.floor(spanMs / 3_600_000), Math.round((spanMs % 3_600_000) / 60_000)],
    source,
  );
  assert.equal(
    loadConfig({ WEBHOOK_RETRY_SCHEDULE: listed }).webhookRetryScheduleMs,
    schedule,
    'the schedule named is the default',
  );
  assert.ok(
    /const RETRIES_MS = 2 \* 24 \* 3600 \* 1000;/.test(source) && 2 * 86_400_000 >= spanMs,
    'two days cover it',
  );
});

test.run();
