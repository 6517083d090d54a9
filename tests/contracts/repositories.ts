import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Account } from '../../domain/account.ts';
import { Contact } from '../../domain/contact.ts';
import { DomainError } from '../../domain/errors.ts';
import { WebhookConfig } from '../../domain/webhook-config.ts';
import { account, at, NO_HEALTH, type Run } from './samples.ts';

/**
 * One behaviour per repository port, held by the in-memory fake and the MikroORM adapter alike (the orders' ports:
 * order-repositories.ts; the command log, the queues, the outbox and the feed: queues.ts).
 */
export function repositoryContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`repository contract: ${name}`);
  let run: Run;
  test.before(async () => {
    run = await setup();
  });

  test('accounts: absent is null; saved comes back whole', async () => {
    const brand = account();
    const partner = account('partner');
    assert.is(await run((r) => r.accounts.get(randomUUID())), null);
    await run(async (r) => {
      await r.accounts.save(brand);
      await r.accounts.save(partner);
    });
    const child = account('partner', partner.id);
    await run((r) => r.accounts.save(child));
    const back = await run((r) => r.accounts.get(child.id));
    assert.instance(back, Account);
    assert.equal({ ...back }, { ...child });
  });

  test('accounts: the partner family (own and master configuration, children, siblings)', async () => {
    const master = account('partner');
    const a = account('partner', master.id);
    const b = account('partner', master.id);
    const now = at('2026-01-01T00:00:00.000Z');
    const masterConfig = new WebhookConfig({
      id: randomUUID(),
      accountId: master.id,
      scope: 'partner',
      url: null,
      transformer: 'partner-format',
      version: '1.1.0',
      signatureKey: null,
      enabled: true,
      ...NO_HEALTH,
      createdAt: now,
      updatedAt: now,
    });
    await run(async (r) => {
      for (const x of [master, a, b]) await r.accounts.save(x);
      await r.webhookConfigs.save(masterConfig);
    });
    const family = (await run((r) => r.accounts.partnerFamily(a.id)))!;
    assert.equal({ ...family.account }, { ...a });
    assert.is(family.ownConfig, null);
    assert.equal({ ...family.masterConfig }, { ...masterConfig });
    assert.equal(family.childIds, []);
    assert.equal([...family.siblingIds].sort(), [a.id, b.id].sort());
    const top = (await run((r) => r.accounts.partnerFamily(master.id)))!;
    assert.equal({ ...top.ownConfig }, { ...masterConfig });
    assert.is(top.masterConfig, null);
    assert.equal([...top.childIds].sort(), [a.id, b.id].sort());
    assert.equal(top.siblingIds, []);
    assert.is(await run((r) => r.accounts.partnerFamily(randomUUID())), null);
  });

  test('accounts: a family read again in the same unit after its configuration was saved has the new configuration', async () => {
    const master = account('partner');
    const now = at('2026-01-01T00:00:00.000Z');
    const config = new WebhookConfig({
      id: randomUUID(),
      accountId: master.id,
      scope: 'partner',
      url: null,
      transformer: 'partner-format',
      version: '1.1.0',
      signatureKey: 'first-key-0123456789',
      enabled: true,
      ...NO_HEALTH,
      createdAt: now,
      updatedAt: now,
    });
    await run(async (r) => {
      await r.accounts.save(master);
      await r.webhookConfigs.save(config);
    });
    const [before, after] = await run(async (r) => {
      const first = (await r.accounts.partnerFamily(master.id))!.ownConfig?.signatureKey;
      await r.webhookConfigs.save(new WebhookConfig({ ...config, signatureKey: 'second-key-0123456789' }));
      return [first, (await r.accounts.partnerFamily(master.id))!.ownConfig?.signatureKey];
    });
    assert.is(before, 'first-key-0123456789');
    assert.is(after, 'second-key-0123456789', 'the configuration saved in this unit, not the family read before it');
  });

  test("a partner's family read with a contact's access is the family read alone; a later save is seen", async () => {
    const master = account('partner');
    const child = account('partner', master.id);
    const now = at('2026-01-01T00:00:00.000Z');
    const config = (owner: Account, key: string) =>
      new WebhookConfig({
        id: randomUUID(),
        accountId: owner.id,
        scope: 'partner',
        url: `https://${key}.example.com/hooks`,
        transformer: 'partner-format',
        version: '1.3.0',
        signatureKey: key,
        enabled: true,
        ...NO_HEALTH,
        createdAt: now,
        updatedAt: now,
      });
    const [masterConfig, childConfig] = [
      config(master, 'master-key-0123456789'),
      config(child, 'child-key-0123456789'),
    ];
    const contactOf = (owner: Account) =>
      new Contact({
        id: randomUUID(),
        accountId: owner.id,
        email: `${randomUUID()}@example.com`,
        apiAccess: true,
        createdAt: now,
      });
    const [ofMaster, ofChild] = [contactOf(master), contactOf(child)];
    await run(async (r) => {
      for (const x of [master, child]) await r.accounts.save(x);
      for (const c of [masterConfig, childConfig]) await r.webhookConfigs.save(c);
      for (const c of [ofMaster, ofChild]) await r.contacts.save(c);
    });
    for (const [contact, owner] of [
      [ofMaster, master],
      [ofChild, child],
    ] as const) {
      const alone = await run((r) => r.accounts.partnerFamily(owner.id));
      const withAccess = await run(async (r) => {
        assert.equal(await r.contacts.accessOf(contact.id), { accountId: owner.id, apiAccess: true });
        return r.accounts.partnerFamily(owner.id);
      });
      assert.equal(withAccess, alone);
    }
    const after = await run(async (r) => {
      await r.contacts.accessOf(ofChild.id);
      await r.webhookConfigs.save(new WebhookConfig({ ...childConfig, signatureKey: 'next-key-0123456789' }));
      return (await r.accounts.partnerFamily(child.id))!.ownConfig?.signatureKey;
    });
    assert.is(
      after,
      'next-key-0123456789',
      'the configuration saved in this unit, not the family read with the access',
    );
  });

  test('contacts: e-mail looked up case-insensitively; unique regardless of case; updates persist', async () => {
    const owner = account();
    const email = `Mixed.${randomUUID().slice(0, 8)}@Example.com`;
    const contact = new Contact({
      id: randomUUID(),
      accountId: owner.id,
      email,
      apiAccess: true,
      createdAt: at('2026-01-01T00:00:00.000Z'),
    });
    await run(async (r) => {
      await r.accounts.save(owner);
      await r.contacts.save(contact);
    });
    assert.is((await run((r) => r.contacts.findByEmail(email.toUpperCase())))?.id, contact.id);
    assert.is(await run((r) => r.contacts.findByEmail(`nobody-${randomUUID()}@example.com`)), null);
    await run(async (r) => {
      const c = (await r.contacts.get(contact.id))!;
      c.apiAccess = false;
      await r.contacts.save(c);
    });
    assert.is((await run((r) => r.contacts.get(contact.id)))?.apiAccess, false);
    assert.equal(await run((r) => r.contacts.accessOf(contact.id)), { accountId: owner.id, apiAccess: false });
    assert.is(await run((r) => r.contacts.accessOf(randomUUID())), null);
    const twin = new Contact({ ...contact, id: randomUUID(), email: email.toLowerCase() });
    try {
      await run((r) => r.contacts.save(twin));
      assert.unreachable('a second contact with the same address was stored');
    } catch (error) {
      assert.instance(error, DomainError);
      assert.is((error as DomainError).code, 'CONFLICT');
    }
  });

  test('webhook configs: one per account and scope; updates persist', async () => {
    const owner = account('partner');
    const now = at('2026-01-01T00:00:00.000Z');
    const config = new WebhookConfig({
      id: randomUUID(),
      accountId: owner.id,
      scope: 'partner',
      url: null,
      transformer: 'partner-format',
      version: '1.1.0',
      signatureKey: 'k'.repeat(20),
      enabled: true,
      ...NO_HEALTH,
      createdAt: now,
      updatedAt: now,
    });
    await run(async (r) => {
      await r.accounts.save(owner);
      await r.webhookConfigs.save(config);
    });
    assert.is(await run((r) => r.webhookConfigs.find(owner.id, 'brand')), null);
    await run(async (r) => {
      const c = (await r.webhookConfigs.find(owner.id, 'partner'))!;
      c.version = '1.3.0';
      c.url = 'https://hooks.example.com/in';
      await r.webhookConfigs.save(c);
    });
    const back = await run((r) => r.webhookConfigs.find(owner.id, 'partner'));
    assert.equal({ ...back }, { ...config, version: '1.3.0', url: 'https://hooks.example.com/in' });
  });

  test('webhook configs: a rotated-out key is kept with its end, read back by find and in the partner family, and cleared once it has ended', async () => {
    const owner = account('partner');
    const now = at('2026-02-01T00:00:00.000Z');
    const config = new WebhookConfig({
      id: randomUUID(),
      accountId: owner.id,
      scope: 'partner',
      url: 'https://hooks.example.com/p',
      transformer: 'partner-format',
      version: '1.3.0',
      signatureKey: 'the-new-key-0123456789',
      previousKey: { value: 'the-old-key-0123456789', expiresAt: at('2026-02-01T01:00:00.000Z') },
      enabled: true,
      ...NO_HEALTH,
      createdAt: now,
      updatedAt: now,
    });
    const otherOwner = account('partner');
    const other = new WebhookConfig({
      ...config,
      id: randomUUID(),
      accountId: otherOwner.id,
      previousKey: { value: 'k'.repeat(20), expiresAt: at('2026-02-02T00:00:00.000Z') },
    });
    await run(async (r) => {
      await r.accounts.save(owner);
      await r.accounts.save(otherOwner);
      await r.webhookConfigs.save(config);
      await r.webhookConfigs.save(other);
    });
    assert.equal((await run((r) => r.webhookConfigs.find(owner.id, 'partner')))?.previousKey, config.previousKey);
    assert.equal((await run((r) => r.accounts.partnerFamily(owner.id)))?.ownConfig?.previousKey, config.previousKey);

    await run((r) => r.webhookConfigs.dropExpiredKeys(at('2026-02-01T00:59:59.999Z')));
    assert.equal(
      (await run((r) => r.webhookConfigs.find(owner.id, 'partner')))?.previousKey,
      config.previousKey,
      'kept until it ends',
    );
    assert.ok((await run((r) => r.webhookConfigs.dropExpiredKeys(at('2026-02-01T01:00:00.000Z')))) >= 1);
    assert.is(
      (await run((r) => r.webhookConfigs.find(owner.id, 'partner')))?.previousKey,
      null,
      'cleared once it has ended',
    );
    assert.equal(
      (await run((r) => r.webhookConfigs.find(other.accountId, 'partner')))?.previousKey,
      other.previousKey,
      'another whose window goes on is kept',
    );
  });

  test.run();
}
