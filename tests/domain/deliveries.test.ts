import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stateAfter } from '../../domain/delivery.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { attemptDelivery, claimDueDeliveries, recordDeliveries } from '../../domain/use-cases/deliver-events.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { fakeDeps, type ScriptedWebhookSender } from '../fakes.ts';

const test = suite('deliveries on the pure domain');
const at = new Date('2026-11-22T12:00:00.000Z');
const ANY_TEN = { limit: 10, leaseMs: 60_000, perEndpoint: 10, held: new Map(), lookForNew: true };

test('the retry schedule: the delays between attempts, then failed', () => {
  const schedule = [5000, 300_000];
  assert.equal(stateAfter(1, true, schedule, at), { status: 'delivered' });
  assert.equal(stateAfter(1, false, schedule, at), { status: 'pending', nextAttemptAt: new Date(at.getTime() + 5000) });
  assert.equal(stateAfter(2, false, schedule, at), {
    status: 'pending',
    nextAttemptAt: new Date(at.getTime() + 300_000),
  });
  assert.equal(stateAfter(3, false, schedule, at), { status: 'failed' });
  assert.equal(stateAfter(1, false, [], at), { status: 'failed' });
});

test('deliveries only where the endpoint has a URL and is enabled; sent to the URL and with the key of the moment', async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  const partner = await createAccount(deps, { name: 'Partner', role: 'partner' });
  await upsertWebhookConfig(deps, {
    accountId: brand.id,
    scope: 'brand',
    url: 'https://b.example.com/1',
    transformer: 'default',
    version: '1.3.0',
    signatureKey: 'first-key-0123456789',
  });
  await upsertWebhookConfig(deps, {
    accountId: partner.id,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.3.0',
  });
  await createJob(deps, { brandAccountId: brand.id, partnerId: partner.id });
  assert.equal(
    deps.events.stored.map((e) => [e.scope, e.deliver]),
    [
      ['brand', true],
      ['partner', false],
    ],
  );
  await upsertWebhookConfig(deps, {
    accountId: brand.id,
    scope: 'brand',
    url: 'https://b.example.com/2',
    transformer: 'default',
    version: '1.3.0',
    signatureKey: 'second-key-0123456789',
  });
  const [claimed] = await claimDueDeliveries(deps, ANY_TEN);
  const sender = deps.webhookSender as ScriptedWebhookSender;
  const result = await attemptDelivery(deps, claimed!, [1000]);
  assert.equal(
    sender.sent.map((s) => [s.url, s.signatureKeys, s.eventId]),
    [['https://b.example.com/2', ['second-key-0123456789'], deps.events.stored[0]!.id]],
  );
  assert.equal(result.state, { status: 'delivered' });
});

test('an endpoint disabled after its event was written keeps the delivery pending until enabled', async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  const configure = (enabled: boolean) =>
    upsertWebhookConfig(deps, {
      accountId: brand.id,
      scope: 'brand',
      url: 'https://b.example.com/1',
      transformer: 'default',
      version: '1.3.0',
      enabled,
    });
  await configure(true);
  await createJob(deps, { brandAccountId: brand.id });
  await configure(false);
  assert.equal(await claimDueDeliveries(deps, ANY_TEN), [], 'nothing handed out while disabled');
  const [waiting] = await deps.deliveryLog.list({ accountId: brand.id, limit: 5 });
  assert.equal([waiting!.status, waiting!.attempts.length], ['pending', 0]);

  await configure(true);
  const [claimed] = await claimDueDeliveries(deps, ANY_TEN);
  const result = await attemptDelivery(deps, claimed!, [1000]);
  await recordDeliveries(deps, [result], 5 * 86_400_000);
  assert.equal(
    (deps.webhookSender as ScriptedWebhookSender).sent.map((s) => s.url),
    ['https://b.example.com/1'],
  );
  const [logged] = await deps.deliveryLog.list({ accountId: brand.id, limit: 5 });
  assert.equal([logged!.status, logged!.attempts.length], ['delivered', 1]);
});

test.run();
