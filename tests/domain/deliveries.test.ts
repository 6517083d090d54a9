import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stateAfter } from '../../domain/delivery.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createContact } from '../../domain/use-cases/create-contact.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { DomainError } from '../../domain/errors.ts';
import { attemptDelivery, claimDueDeliveries, deliverDueEvents, recordDeliveries } from '../../domain/use-cases/deliver-events.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { fakeDeps, ScriptedWebhookSender } from '../fakes.ts';

const test = suite('deliveries on the pure domain');
const at = new Date('2026-11-22T12:00:00.000Z');

test('the retry schedule: the delays between attempts, then failed', () => {
  const schedule = [5000, 300_000];
  assert.equal(stateAfter(1, true, schedule, at), { status: 'delivered' });
  assert.equal(stateAfter(1, false, schedule, at), { status: 'pending', nextAttemptAt: new Date(at.getTime() + 5000) });
  assert.equal(stateAfter(2, false, schedule, at), { status: 'pending', nextAttemptAt: new Date(at.getTime() + 300_000) });
  assert.equal(stateAfter(3, false, schedule, at), { status: 'failed' });
  assert.equal(stateAfter(1, false, [], at), { status: 'failed' });
});

test('deliveries only where the endpoint has a URL and is enabled; sent to the URL and with the key of the moment', async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  const partner = await createAccount(deps, { name: 'Partner', role: 'partner' });
  await upsertWebhookConfig(deps, { accountId: brand.id, scope: 'brand', url: 'https://b.example.com/1', transformer: 'default', version: '1.3.0', signatureKey: 'first-key-0123456789' });
  await upsertWebhookConfig(deps, { accountId: partner.id, scope: 'partner', transformer: 'partner-format', version: '1.3.0' });
  await createJob(deps, { brandAccountId: brand.id, partnerId: partner.id });
  assert.equal(deps.events.stored.map((e) => [e.scope, e.deliver]), [['brand', true], ['partner', false]]);
  await upsertWebhookConfig(deps, { accountId: brand.id, scope: 'brand', url: 'https://b.example.com/2', transformer: 'default', version: '1.3.0', signatureKey: 'second-key-0123456789' });
  const [claimed] = await claimDueDeliveries(deps, 10, 60_000);
  const sender = deps.webhookSender as ScriptedWebhookSender;
  const result = await attemptDelivery(deps, claimed!, [1000]);
  assert.equal(sender.sent.map((s) => [s.url, s.signatureKeys, s.eventId]), [['https://b.example.com/2', ['second-key-0123456789'], deps.events.stored[0]!.id]]);
  assert.equal(result.state, { status: 'delivered' });
});

test('an endpoint disabled after the event was written gets nothing: the delivery fails at once, without a request', async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  await upsertWebhookConfig(deps, { accountId: brand.id, scope: 'brand', url: 'https://b.example.com/1', transformer: 'default', version: '1.3.0' });
  await createJob(deps, { brandAccountId: brand.id });
  await upsertWebhookConfig(deps, { accountId: brand.id, scope: 'brand', url: 'https://b.example.com/1', transformer: 'default', version: '1.3.0', enabled: false });
  const [claimed] = await claimDueDeliveries(deps, 10, 60_000);
  const result = await attemptDelivery(deps, claimed!, [1000]);
  assert.equal([result.state, result.attempt.error], [{ status: 'failed' }, 'the endpoint is disabled']);
  assert.equal((deps.webhookSender as ScriptedWebhookSender).sent, []);
  await recordDeliveries(deps, [result], 5 * 86_400_000);
  const [logged] = await deps.deliveries.list({ accountId: brand.id, limit: 5 });
  assert.equal([logged!.status, logged!.attempts.length], ['failed', 1]);
});

test('after the database failed, a round pauses for its backoff: a wake-up does not cut it short', async () => {
  const deps = fakeDeps();
  const claimDue = deps.deliveries.claimDue.bind(deps.deliveries);
  let claims = 0;
  deps.deliveries.claimDue = async (...args) => {
    if (++claims === 1) throw new DomainError('UNAVAILABLE', 'the database is away');
    return claimDue(...args);
  };
  const waits: string[] = [];
  const failed: string[] = [];
  await deliverDueEvents(deps, { maxInFlight: 2, attemptMs: 1000, leaseMs: 2000, scheduleMs: [1000], idleMs: 1000, disableAfterMs: 5 * 86_400_000 }, {
    // A wake-up pending all along: a wait for work ends at once, and the backoff would be skipped if it were one.
    waitForWork: async (ms) => { waits.push(`work ${ms}`); },
    pause: async (ms) => { waits.push(`pause ${ms}; claims so far ${claims}`); },
    stopping: () => false,
    attempted: () => {}, noticed: () => {},
    stepFailed: (step) => { failed.push(step); },
  });
  assert.equal(failed, ['claim']);
  assert.equal(waits, ['pause 1000; claims so far 1'], 'the backoff is a pause, and the next claim comes after it');
  assert.is(claims, 2);
});

test('a send that fails is reported with its delivery\'s id', async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  await upsertWebhookConfig(deps, { accountId: brand.id, scope: 'brand', url: 'https://b.example.com/1', transformer: 'default', version: '1.3.0' });
  await createJob(deps, { brandAccountId: brand.id });
  const [pending] = deps.deliveries.rows;
  const failure = new Error('the sender broke');
  deps.webhookSender.send = async () => { throw failure; };
  const reports: unknown[] = [];
  await deliverDueEvents(deps, { maxInFlight: 2, attemptMs: 1000, leaseMs: 2000, scheduleMs: [1000], idleMs: 1000, disableAfterMs: 5 * 86_400_000 }, {
    waitForWork: async () => {}, pause: async () => {}, stopping: () => false, attempted: () => {}, noticed: () => {},
    stepFailed: (step, error, about) => { reports.push({ step, error, about }); },
  });
  assert.equal(reports, [{ step: 'send', error: failure, about: { deliveries: 1, deliveryId: pending!.id } }]);
});

test('a mail that cannot be sent is reported, the other contacts are mailed, and the endpoint\'s state stands', async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  for (const [email, apiAccess] of [['broken@example.com', true], ['fine@example.com', true], ['none@example.com', false]] as const) {
    await createContact(deps, { accountId: brand.id, email, apiAccess });
  }
  await upsertWebhookConfig(deps, { accountId: brand.id, scope: 'brand', url: 'https://b.example.com/1', transformer: 'default', version: '1.3.0' });
  await createJob(deps, { brandAccountId: brand.id });
  deps.webhookSender = new ScriptedWebhookSender(deps.clock, () => 500);
  const refusal = new Error('the SMTP server refused');
  const mailed: string[] = [];
  deps.mailer.send = async (message) => {
    if (message.to === 'broken@example.com') throw refusal;
    mailed.push(`${message.to}: ${message.subject}`);
  };
  const reports: unknown[] = [];
  const noticed: string[] = [];
  await deliverDueEvents(deps, { maxInFlight: 2, attemptMs: 1000, leaseMs: 2000, scheduleMs: [], idleMs: 1000, disableAfterMs: 0 }, {
    waitForWork: async () => {}, pause: async () => {}, stopping: () => false, attempted: () => {},
    noticed: (notice) => { noticed.push(`${notice.kind} ${notice.url} ${notice.failedDeliveries}`); },
    stepFailed: (step, error, about) => { reports.push({ step, error, about }); },
  });
  // The round ends once its mails are out.
  assert.equal(noticed, ['disabled https://b.example.com/1 1']);
  assert.equal(mailed, ['fine@example.com: Webhook endpoint disabled: https://b.example.com/1']);
  assert.equal(reports, [{ step: 'mail', error: refusal, about: { deliveries: 1 } }]);
  const config = await deps.webhookConfigs.find(brand.id, 'brand');
  assert.equal([config!.enabled, config!.disabledReason, config!.failingSince], [false, 'failing', deps.clock.now()]);
});

test.run();
