import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { accountOverview } from '../../domain/use-cases/account-overview.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createContact } from '../../domain/use-cases/create-contact.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { getJob } from '../../domain/use-cases/get-job.ts';
import { searchAccounts } from '../../domain/use-cases/search-accounts.ts';
import { searchDeliveries } from '../../domain/use-cases/search-deliveries.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { fakeDeps } from '../fakes.ts';
import { rejectsWith } from './helpers.ts';

// The operator console's use cases (docs/operators.md, "The operator console") on the fakes.
const test = suite("the operator console's reads");

async function family() {
  const deps = fakeDeps();
  const master = await createAccount(deps, { name: 'Master', role: 'partner' });
  const child = await createAccount(deps, { name: 'Child', role: 'partner', parentId: master.id });
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  await createContact(deps, { accountId: child.id, email: 'Dispatch@child.example', apiAccess: false });
  await upsertWebhookConfig(deps, {
    accountId: brand.id,
    scope: 'brand',
    url: 'https://hooks.brand.example/in',
    transformer: 'default',
    version: '1.3.0',
  });
  return { deps, master, child, brand };
}

test('an account found by a part of a contact e-mail, the text trimmed, and the addresses that matched', async () => {
  const { deps, child } = await family();
  const found = await searchAccounts(deps, { text: '  dispatch@  ' });
  assert.equal(
    found.map((m) => [m.account.id, m.matchedEmails]),
    [[child.id, ['Dispatch@child.example']]],
  );
  assert.equal(
    (await searchAccounts(deps, { text: 'a', limit: 2 })).map((m) => m.account.name),
    ['Brand', 'Child'],
  );
});

test("an account's overview: master, children, contacts and its own configurations; unknown is NOT_FOUND", async () => {
  const { deps, master, child, brand } = await family();
  const ofMaster = await accountOverview(deps, master.id);
  assert.equal([ofMaster.parent, ofMaster.children.map((c) => c.id), ofMaster.configs], [null, [child.id], []]);
  const ofChild = await accountOverview(deps, child.id);
  assert.equal([ofChild.parent?.id, ofChild.contacts.map((c) => c.email)], [master.id, ['Dispatch@child.example']]);
  const ofBrand = await accountOverview(deps, brand.id);
  assert.equal(
    ofBrand.configs.map((c) => [c.scope, c.url]),
    [['brand', 'https://hooks.brand.example/in']],
  );
  await rejectsWith(accountOverview(deps, 'no-such-account'), 'NOT_FOUND');
});

test('deliveries by order come from the log; by event id through the search; a job by its order id', async () => {
  const { deps, brand } = await family();
  const job = await createJob(deps, { brandAccountId: brand.id });
  const byOrder = await searchDeliveries(deps, { orderId: job.apiId });
  assert.ok(byOrder.length > 0 && byOrder.every((d) => d.orderId === job.apiId));
  const [first] = byOrder;
  assert.equal(
    (await searchDeliveries(deps, { eventId: first!.eventId })).map((d) => d.id),
    [first!.id],
  );
  assert.equal(await searchDeliveries(deps, { cid: 'nobody-sent-this' }), []);
  assert.is((await getJob(deps, job.apiId)).apiId, job.apiId);
  await rejectsWith(getJob(deps, 'no-such-order'), 'NOT_FOUND');
});

test.run();
