import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Principal } from '../../domain/auth.ts';
import { checkCommandSignature } from '../../domain/use-cases/check-command-signature.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { attemptDelivery, claimDueDeliveries, recordDeliveries } from '../../domain/use-cases/deliver-events.ts';
import { getWebhookConfig } from '../../domain/use-cases/get-webhook-config.ts';
import { purgeRetainedEvents } from '../../domain/use-cases/purge-retained-events.ts';
import { rotateSignatureKey } from '../../domain/use-cases/rotate-signature-key.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { keysInForce } from '../../domain/webhook-config.ts';
import { type FakeDeps, fakeDeps, type ScriptedWebhookSender } from '../fakes.ts';
import { rejectsWith } from './helpers.ts';

const test = suite('signature key rotation on the pure domain');
const OLD = 'the-old-key-0123456789';
const NEW = 'the-new-key-0123456789';
const NEWER = 'the-newer-key-0123456789';

async function partnerWithKey(deps: FakeDeps, signatureKey: string | null = OLD) {
  const partner = await createAccount(deps, { name: 'P', role: 'partner' });
  await upsertWebhookConfig(deps, {
    accountId: partner.id,
    scope: 'partner',
    url: 'https://p.example.com/h',
    transformer: 'partner-format',
    version: '1.3.0',
    signatureKey,
  });
  return { id: partner.id, principal: { contactId: 'c', accountId: partner.id, role: 'partner' } satisfies Principal };
}
/** Whether a command signed with `key` passes the check (the fakes' signature is `sig(key:body)`). */
const passes = (deps: FakeDeps, principal: Principal, key: string) =>
  checkCommandSignature(deps, principal, { rawBody: Buffer.from('{}'), signature: `sig(${key}:{})` }).then(
    () => true,
    () => false,
  );

test('keysInForce: the current key first, the previous one until its end (excluded), nothing without a current key', () => {
  const expiresAt = new Date('2026-01-01T01:00:00.000Z');
  const keys = { signatureKey: NEW, previousKey: { value: OLD, expiresAt } };
  assert.equal(keysInForce(keys, new Date('2026-01-01T00:59:59.999Z')), [NEW, OLD]);
  assert.equal(keysInForce(keys, expiresAt), [NEW]);
  assert.equal(keysInForce({ signatureKey: NEW, previousKey: null }, expiresAt), [NEW]);
  assert.equal(keysInForce({ signatureKey: null, previousKey: null }, expiresAt), []);
});

test('rotating: the new key is the key, the old one valid for the window (a day by default), never in the view; then only the new one', async () => {
  const deps = fakeDeps();
  const { id, principal } = await partnerWithKey(deps);
  const { config: rotated } = await rotateSignatureKey(deps, { accountId: id, scope: 'partner', signatureKey: NEW });
  const view = rotated.view();
  assert.is(view.previousKeyExpiresAt, new Date(deps.clock.now().getTime() + 86_400_000).toISOString());
  assert.not.match(JSON.stringify(view), /the-(old|new)-key/, 'no key is shown');
  assert.equal(
    [await passes(deps, principal, NEW), await passes(deps, principal, OLD), await passes(deps, principal, NEWER)],
    [true, true, false],
  );
  deps.clock.advance(86_399);
  assert.ok(await passes(deps, principal, OLD), 'the old key passes until the window ends');
  deps.clock.advance(1);
  assert.equal(
    [await passes(deps, principal, NEW), await passes(deps, principal, OLD)],
    [true, false],
    'at its end the old key counts no more',
  );
  assert.is(
    (await getWebhookConfig(deps, { accountId: id, scope: 'partner' })).view().previousKeyExpiresAt,
    null,
    'and is no longer shown as valid',
  );
  assert.is(await deps.webhookConfigs.dropExpiredKeys(deps.clock.now()), 1);
  await purgeRetainedEvents(deps, 30, 100);
  assert.is((await deps.webhookConfigs.find(id, 'partner'))!.previousKey, null, 'cleared from storage');
});

test('previousKeyValidFor 0 keeps no old key; the purge clears ended windows', async () => {
  const deps = fakeDeps();
  const { id, principal } = await partnerWithKey(deps);
  const { config: rotated } = await rotateSignatureKey(deps, {
    accountId: id,
    scope: 'partner',
    signatureKey: NEW,
    previousKeyValidFor: 0,
  });
  assert.equal([rotated.previousKey, await passes(deps, principal, OLD)], [null, false]);
  await rotateSignatureKey(deps, { accountId: id, scope: 'partner', signatureKey: NEWER, previousKeyValidFor: 60 });
  deps.clock.advance(60);
  await purgeRetainedEvents(deps, 30, 100);
  assert.is((await deps.webhookConfigs.find(id, 'partner'))!.previousKey, null);
});

test('a PUT with a key (or null) ends the window at once; one without keeps it', async () => {
  const deps = fakeDeps();
  const { id, principal } = await partnerWithKey(deps);
  const put = (extra: object) =>
    upsertWebhookConfig(deps, {
      accountId: id,
      scope: 'partner',
      transformer: 'partner-format',
      version: '1.3.0',
      ...extra,
    });
  await rotateSignatureKey(deps, { accountId: id, scope: 'partner', signatureKey: NEW, previousKeyValidFor: 3600 });
  assert.ok((await put({})).previousKey, 'a PUT without signatureKey keeps the window');
  assert.ok(await passes(deps, principal, OLD));
  const replaced = await put({ signatureKey: NEWER });
  assert.equal([replaced.previousKey, replaced.view().previousKeyExpiresAt], [null, null]);
  assert.equal(
    [await passes(deps, principal, NEWER), await passes(deps, principal, NEW), await passes(deps, principal, OLD)],
    [true, false, false],
  );
  await rotateSignatureKey(deps, { accountId: id, scope: 'partner', signatureKey: NEW });
  const removed = await put({ signatureKey: null });
  assert.equal([removed.signatureKey, removed.previousKey], [null, null]);
  assert.ok(await passes(deps, principal, 'anything'), 'no key: no signature needed');
});

test("refusals: nothing to rotate is CONFLICT, no configuration of one's own NOT_FOUND, a short key or a window out of bounds VALIDATION_FAILED", async () => {
  const deps = fakeDeps();
  const keyless = await partnerWithKey(deps, null);
  await rejectsWith(
    rotateSignatureKey(deps, { accountId: keyless.id, scope: 'partner', signatureKey: NEW }),
    'CONFLICT',
  );
  const child = await createAccount(deps, { name: 'C', role: 'partner', parentId: (await partnerWithKey(deps)).id });
  await rejectsWith(
    rotateSignatureKey(deps, { accountId: child.id, scope: 'partner', signatureKey: NEW }),
    'NOT_FOUND',
  );
  const { id } = await partnerWithKey(deps);
  await rejectsWith(
    rotateSignatureKey(deps, { accountId: id, scope: 'partner', signatureKey: 'short' }),
    'VALIDATION_FAILED',
    'signatureKey',
  );
  for (const previousKeyValidFor of [-1, 604_801, 1.5]) {
    await rejectsWith(
      rotateSignatureKey(deps, { accountId: id, scope: 'partner', signatureKey: NEW, previousKeyValidFor }),
      'VALIDATION_FAILED',
      'previousKeyValidFor',
    );
  }
  assert.is((await deps.webhookConfigs.find(id, 'partner'))!.signatureKey, OLD, 'nothing changed');
  await rotateSignatureKey(deps, { accountId: id, scope: 'partner', signatureKey: NEW, previousKeyValidFor: 604_800 });
});

test('deliveries during the window are signed with both keys, the new first; after it with the new one only', async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'B', role: 'brand' });
  await upsertWebhookConfig(deps, {
    accountId: brand.id,
    scope: 'brand',
    url: 'https://b.example.com/h',
    transformer: 'default',
    version: '1.3.0',
    signatureKey: OLD,
  });
  await rotateSignatureKey(deps, { accountId: brand.id, scope: 'brand', signatureKey: NEW, previousKeyValidFor: 60 });
  const sender = deps.webhookSender as ScriptedWebhookSender;
  const deliverOne = async () => {
    await createJob(deps, { brandAccountId: brand.id });
    const [claimed] = await claimDueDeliveries(deps, {
      limit: 1,
      leaseMs: 60_000,
      perEndpoint: 1,
      held: new Map(),
      lookForNew: true,
    });
    await recordDeliveries(deps, [await attemptDelivery(deps, claimed!, [])], 5 * 86_400_000);
    return sender.sent.at(-1)!.signatureKeys;
  };
  assert.equal(await deliverOne(), [NEW, OLD]);
  deps.clock.advance(60);
  assert.equal(await deliverOne(), [NEW]);
});

test.run();
