import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createContact } from '../../domain/use-cases/create-contact.ts';
import { setContactApiAccess } from '../../domain/use-cases/set-contact-api-access.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { fakeDeps } from '../fakes.ts';
import { rejectsWith } from './helpers.ts';

const test = suite('accounts, contacts and webhook configurations');

test('a partner may have a master; the master may not have one itself', async () => {
  const deps = fakeDeps();
  const master = await createAccount(deps, { name: 'Master', role: 'partner' });
  const child = await createAccount(deps, { name: 'Child', role: 'partner', parentId: master.id });
  assert.is(child.parentId, master.id);
  assert.equal(await deps.accounts.get(child.id), child);
  await rejectsWith(
    createAccount(deps, { name: 'Grandchild', role: 'partner', parentId: child.id }),
    'VALIDATION_FAILED',
    'parentId',
  );
});

test('brands have no master; a master must exist and be a partner; a name is required', async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  const partner = await createAccount(deps, { name: 'P', role: 'partner' });
  await rejectsWith(
    createAccount(deps, { name: 'B2', role: 'brand', parentId: partner.id }),
    'VALIDATION_FAILED',
    'parentId',
  );
  await rejectsWith(
    createAccount(deps, { name: 'P2', role: 'partner', parentId: brand.id }),
    'VALIDATION_FAILED',
    'parentId',
  );
  await rejectsWith(
    createAccount(deps, { name: 'P3', role: 'partner', parentId: '00000000-0000-4000-8000-999999999999' }),
    'VALIDATION_FAILED',
    'parentId',
  );
  await rejectsWith(createAccount(deps, { name: '  ', role: 'brand' }), 'VALIDATION_FAILED', 'name');
});

test('contact e-mail addresses are unique case-insensitively; API access defaults to on', async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  const contact = await createContact(deps, { accountId: brand.id, email: ' Ops@Brand.Example ' });
  assert.is(contact.email, 'Ops@Brand.Example');
  assert.is(contact.apiAccess, true);
  await rejectsWith(createContact(deps, { accountId: brand.id, email: 'ops@brand.example' }), 'CONFLICT');
  await rejectsWith(
    createContact(deps, { accountId: brand.id, email: 'not-an-address' }),
    'VALIDATION_FAILED',
    'email',
  );
  await rejectsWith(
    createContact(deps, { accountId: '00000000-0000-4000-8000-999999999999', email: 'x@y.example' }),
    'NOT_FOUND',
  );
});

test('API access can be withdrawn and given back', async () => {
  const deps = fakeDeps();
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  const contact = await createContact(deps, { accountId: brand.id, email: 'a@b.example' });
  await setContactApiAccess(deps, { contactId: contact.id, apiAccess: false });
  assert.is((await deps.contacts.get(contact.id))?.apiAccess, false);
  await setContactApiAccess(deps, { contactId: contact.id, apiAccess: true });
  assert.is((await deps.contacts.get(contact.id))?.apiAccess, true);
  await rejectsWith(setContactApiAccess(deps, { contactId: 'nope', apiAccess: true }), 'NOT_FOUND');
});

test('webhook configuration: scope follows the role; an absent key is kept, null removes it', async () => {
  const deps = fakeDeps();
  const partner = await createAccount(deps, { name: 'P', role: 'partner' });
  await rejectsWith(
    upsertWebhookConfig(deps, { accountId: partner.id, scope: 'brand', transformer: 'default', version: '1.3.0' }),
    'VALIDATION_FAILED',
    'scope',
  );
  const first = await upsertWebhookConfig(deps, {
    accountId: partner.id,
    scope: 'partner',
    url: 'https://hooks.example.com/a',
    transformer: 'partner-format',
    version: '1.1.0',
    signatureKey: 'a-very-secret-key-123',
    enabled: false,
  });
  assert.is(first.enabled, false);
  assert.equal(first.view(), {
    accountId: partner.id,
    scope: 'partner',
    url: 'https://hooks.example.com/a',
    transformer: 'partner-format',
    version: '1.1.0',
    enabled: false,
    hasSignatureKey: true,
    previousKeyExpiresAt: null,
    failingSince: null,
    disabledReason: 'integrator',
    asymmetricSigning: false,
    publicKey: null,
    previousPublicKey: null,
  });
  const second = await upsertWebhookConfig(deps, {
    accountId: partner.id,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.3.0',
  });
  assert.is(second.id, first.id);
  assert.is(second.signatureKey, 'a-very-secret-key-123');
  assert.is(second.url, 'https://hooks.example.com/a');
  assert.is(second.enabled, true);
  assert.is(second.disabledReason, null, 'enabled again: no reason to be disabled');
  const third = await upsertWebhookConfig(deps, {
    accountId: partner.id,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.3.0',
    signatureKey: null,
    url: null,
  });
  assert.is(third.signatureKey, null);
  assert.is(third.url, null);
  await rejectsWith(
    upsertWebhookConfig(deps, {
      accountId: partner.id,
      scope: 'partner',
      transformer: 'partner-format',
      version: '1.3.0',
      signatureKey: 'short',
    }),
    'VALIDATION_FAILED',
    'signatureKey',
  );
});

test('a refused webhook URL changes nothing', async () => {
  const deps = { ...fakeDeps(), webhookTargets: { refusalReason: async () => 'not public' } };
  const brand = await createAccount(deps, { name: 'B', role: 'brand' });
  await rejectsWith(
    upsertWebhookConfig(deps, {
      accountId: brand.id,
      scope: 'brand',
      url: 'http://10.0.0.1/',
      transformer: 'default',
      version: '1.3.0',
    }),
    'VALIDATION_FAILED',
    'url',
  );
  assert.is(await deps.webhookConfigs.find(brand.id, 'brand'), null);
});

test.run();
