import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Account } from '../../domain/account.ts';
import { Contact } from '../../domain/contact.ts';
import { OutboxEvent } from '../../domain/event.ts';
import { WebhookConfig, type WebhookConfigProps } from '../../domain/webhook-config.ts';
import { at, type Run, webhookConfig } from './samples.ts';

/** The operator console's reads across accounts, held by the in-memory fake and the SQL adapter alike. */
export function operatorSearchContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`operator search contract: ${name}`);
  let run: Run;
  const tag = randomUUID().slice(0, 8);
  const now = at('2026-03-01T00:00:00.000Z');
  const named = (name: string, role: Account['role'] = 'partner', parentId: string | null = null) =>
    new Account({ id: randomUUID(), name: `${name} ${tag}`, role, parentId, createdAt: now });
  const master = named('Master');
  const child = named('Child', 'partner', master.id);
  const brand = named('Brand', 'brand');
  const contact = (accountId: string, local: string, minutes: number) =>
    new Contact({
      id: randomUUID(),
      accountId,
      email: `${local}-${tag}@Example.com`,
      apiAccess: minutes % 2 === 0,
      createdAt: new Date(now.getTime() + minutes * 60_000),
    });
  const contacts = [contact(child.id, 'late', 2), contact(child.id, 'early', 1), contact(brand.id, 'orders', 0)];
  const config = (account: Account, health: Partial<WebhookConfigProps>) =>
    webhookConfig(account.id, 'https://hooks.example.com/in', now, account.role, health);
  const failing = config(brand, { failingSince: at('2026-03-01T10:00:00.000Z') });
  const disabled = config(master, { enabled: false, disabledReason: 'failing', failingSince: now });

  test.before(async () => {
    run = await setup();
    await run(async (r) => {
      for (const a of [master, child, brand]) await r.accounts.save(a);
      for (const c of contacts) await r.contacts.save(c);
      await r.webhookConfigs.save(failing);
      await r.webhookConfigs.save(disabled);
    });
  });

  test('accounts: by a part of the name or of a contact e-mail, any case, by name; % and _ literal', async () => {
    const found = await run((r) => r.operatorSearch.accounts(`EARLY-${tag}`, 10));
    assert.equal(
      found.map((m) => [m.account.id, m.matchedEmails]),
      [[child.id, [`early-${tag}@Example.com`]]],
    );
    assert.instance(found[0]?.account, Account);
    const byName = await run((r) => r.operatorSearch.accounts(tag, 10));
    assert.equal(
      byName.map((m) => [m.account.name, m.matchedEmails]),
      [
        [`Brand ${tag}`, []],
        [`Child ${tag}`, []],
        [`Master ${tag}`, []],
      ],
    );
    assert.is((await run((r) => r.operatorSearch.accounts(tag, 2))).length, 2);
    assert.equal(await run((r) => r.operatorSearch.accounts(`${tag}%`, 10)), []);
    assert.equal(await run((r) => r.operatorSearch.accounts(`_${tag.slice(1)}`, 10)), []);
  });

  test('children and contacts of an account; none for an unknown id', async () => {
    assert.equal(
      (await run((r) => r.operatorSearch.childrenOf(master.id))).map((a) => a.id),
      [child.id],
    );
    const [first, second] = await run((r) => r.operatorSearch.contactsOf(child.id));
    assert.instance(first, Contact);
    assert.equal({ ...first }, { ...contacts[1] });
    assert.equal({ ...second }, { ...contacts[0] });
    assert.equal(await run((r) => r.operatorSearch.childrenOf('nope')), []);
    assert.equal(await run((r) => r.operatorSearch.contactsOf(randomUUID())), []);
  });

  test('endpoints by health, with the account name', async () => {
    const mine = async (health: 'all' | 'failing' | 'disabled') =>
      (await run((r) => r.operatorSearch.endpoints(health, 10_000)))
        .filter((e) => e.accountName.endsWith(tag))
        .map((e) => [e.config.id, e.accountName]);
    assert.equal(await mine('failing'), [[failing.id, `Brand ${tag}`]]);
    assert.equal(await mine('disabled'), [[disabled.id, `Master ${tag}`]]);
    assert.equal((await mine('all')).length, 2);
    const [one] = await run((r) => r.operatorSearch.endpoints('failing', 1));
    assert.instance(one?.config, WebhookConfig);
  });

  test('commands and the deliveries of their outcome by _cid; deliveries by event id', async () => {
    const cid = `cid-${tag}`;
    const event = new OutboxEvent({
      id: randomUUID(),
      accountId: brand.id,
      scope: 'brand',
      type: 'CommandErrorEvent',
      orderId: null,
      payload: { _cid: cid },
      endpointId: failing.id,
      deliver: true,
      createdAt: now,
    });
    const body = { _type: 'RefreshOrder' };
    await run(async (r) => {
      await r.commands.claim({ accountId: brand.id, cid, type: 'RefreshOrder', body }, now);
      await r.commands.accept({ accountId: child.id, cid, type: 'RefreshOrder', body, answer: null }, now);
      await r.events.add([event]);
      await r.commands.finish(brand.id, cid, { status: 'failed', result: { _eid: event.id, code: 'X' } }, now);
    });
    const commands = await run((r) => r.operatorSearch.commandsByCid(cid, 10));
    assert.equal(
      commands.map((c) => [c.accountId, c.status, c.result]).sort(),
      [
        [brand.id, 'failed', { _eid: event.id, code: 'X' }],
        [child.id, 'accepted', null],
      ].sort(),
    );
    const byCid = await run((r) => r.operatorSearch.deliveryIds({ cid }, 10));
    assert.is(byCid.length, 1);
    assert.equal(await run((r) => r.operatorSearch.deliveryIds({ eventId: event.id }, 10)), byCid);
    assert.equal(await run((r) => r.operatorSearch.deliveryIds({ eventId: 'not-an-id' }, 10)), []);
    assert.equal(await run((r) => r.operatorSearch.deliveryIds({ cid: 'nobody' }, 10)), []);
    assert.equal(await run((r) => r.operatorSearch.commandsByCid('nobody', 10)), []);
  });

  test.run();
}
