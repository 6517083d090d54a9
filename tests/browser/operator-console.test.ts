// Issue 37: the operator console at /portal/operator/, on the typed RPC face, signed in with ADMIN_TOKEN (kept in the
// tab's sessionStorage only): an account found from a contact's e-mail, its failed delivery read and redelivered, API
// access granted, a wrong token refused, and axe on every page.
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ADMIN_TOKEN } from '../support/app.ts';
import { skipUnless } from '../support/skip.ts';
import { type Account, shot, startPortal } from './fixture.ts';
import { assertAccessible, hasChromium, mailedLink, NO_CHROMIUM } from './support.ts';

const test = suite('the operator console');
let portal: Awaited<ReturnType<typeof startPortal>>;
let failing: Account;
let orderId: string;
type Json = Record<string, any>;

const failedDeliveries = async () =>
  (
    await portal.app.admin.query<{ items: Json[] }>('deliveries.list', {
      accountId: failing.accountId,
      status: 'failed',
    })
  ).items;

/** A brand command of the failing account's contact, run: its `_cid`. */
async function sentCommand() {
  const refresh = decodeURIComponent((await portal.link(failing.email)).split('#refresh=')[1]!);
  const { body } = await portal.app.http
    .post('/v3/auth/access-token')
    .set('authorization', `Bearer ${refresh}`)
    .send({});
  const cid = `console-${Date.now()}`;
  const sent = await portal.app.http
    .post('/v3/commands')
    .set('authorization', `Bearer ${body.access_token}`)
    .send({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId });
  assert.is(sent.status, 202, JSON.stringify(sent.body));
  await portal.until(async () => {
    const { items } = await portal.app.admin.query<{ items: Json[] }>('commands.find', { cid });
    return items[0]?.status === 'succeeded';
  }, 'the command');
  return cid;
}

/** A new order of the failing account, once its delivery has failed. */
async function failedOrder() {
  const { apiId } = await portal.app.admin.call<{ apiId: string }>('jobs.create', {
    brandAccountId: failing.accountId,
  });
  await portal.until(async () => (await failedDeliveries()).some((d) => d.orderId === apiId), 'a failed delivery');
  return apiId;
}

test.before(async () => {
  if (!hasChromium) return;
  portal = await startPortal();
  // Every webhook fails, twice (the schedule is one retry 100 ms on): the endpoint is failing, its delivery failed.
  portal.state.answer = 500;
  failing = await portal.account('brand', '/operator-console');
  orderId = await failedOrder();
});
test.after(async () => {
  if (hasChromium) await portal.stop();
});

async function signedIn(): Promise<Page> {
  const page = await portal.newPage();
  await page.goto(`${portal.base}/portal/operator/`);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Accounts', level: 1 }).waitFor();
  return page;
}

async function searchAccount(page: Page, text: string) {
  await page.getByRole('link', { name: 'Accounts' }).click();
  await page.getByLabel('Name or contact e-mail').fill(text);
  await page.getByRole('button', { name: 'Search' }).click();
}

test("a contact's e-mail finds the failing account; its failed delivery is read and redelivered", async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const page = await signedIn();
  await searchAccount(page, failing.email.toUpperCase());
  await page.getByRole('link', { name: failing.name }).click();
  await page.getByRole('heading', { name: failing.name, level: 1 }).waitFor();
  await page.getByText(/failing since \d{4}-\d\d-\d\d/).waitFor();
  const failed = (await failedDeliveries()).find((d) => d.orderId === orderId);
  await page.getByRole('link', { name: new RegExp(`of order ${orderId}`) }).click();
  await page.getByRole('button', { name: 'Redeliver' }).waitFor();
  assert.match(await page.getByRole('heading', { level: 1 }).innerText(), /failed/);
  await page.getByRole('link', { name: failing.name, exact: true }).waitFor(); // its account, by name
  assert.is(await page.getByRole('row').filter({ hasText: '500' }).count(), 2, 'both attempts answered 500');
  assert.match(page.url(), `#/deliveries/${failed!.id}`);
  portal.state.answer = 200;
  await page.getByRole('button', { name: 'Redeliver' }).click();
  await page.getByText('Sent again: the delivery is pending').waitFor();
  await portal.until(async () => {
    const d = await portal.app.admin.query<Json>('deliveries.get', { deliveryId: failed!.id });
    return d.status === 'delivered';
  }, 'the redelivery');
  await page.reload();
  assert.match(await page.getByRole('heading', { level: 1 }).innerText(), /delivered/);
  portal.state.answer = 500;
});

test('API access granted in the console: the contact can sign in to the portal', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const partner = await portal.account('partner');
  await portal.app.admin.call('contacts.setApiAccess', { contactId: partner.contactId, apiAccess: false });
  await portal.link(partner.email).then(
    () => assert.unreachable('a contact without API access gets no link'),
    (error: Error) => assert.match(error.message, 'no mail to'),
  );
  const page = await signedIn();
  await searchAccount(page, partner.email);
  await page.getByRole('link', { name: partner.name }).click();
  await page.getByRole('button', { name: `Grant API access to ${partner.email}` }).click();
  await page.getByRole('button', { name: `Withdraw API access of ${partner.email}` }).waitFor();
  await page.getByText('yes: can sign in').waitFor();
  const portalPage = await portal.newPage();
  await portal.signIn(portalPage, partner.email);
  assert.match(await mailedLink(portal.mailDir, partner.email), '/portal/#refresh=');

  // Withdrawing is asked first, in a modal dialog: Escape and "Keep access" keep it, "Withdraw" withdraws; the focus
  // comes back to the contact's button each time.
  const accessOf = async () =>
    (
      await portal.app.admin.query<{ contacts: { apiAccess: boolean }[] }>('accounts.get', {
        accountId: partner.accountId,
      })
    ).contacts[0]?.apiAccess;
  const withdraw = page.getByRole('button', { name: `Withdraw API access of ${partner.email}` });
  const question = page.getByRole('dialog', { name: `Withdraw API access of ${partner.email}?` });
  const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '');
  await withdraw.click();
  await question.waitFor();
  await assertAccessible(page, 'the question before withdrawing');
  assert.is(await page.evaluate(() => document.activeElement?.textContent), 'Keep access', 'the safe answer first');
  await page.keyboard.press('Escape');
  await question.waitFor({ state: 'detached' });
  assert.is(await focused(), `Withdraw API access of ${partner.email}`);
  await withdraw.click();
  await question.getByRole('button', { name: 'Keep access' }).click();
  await question.waitFor({ state: 'detached' });
  assert.is(await focused(), `Withdraw API access of ${partner.email}`);
  assert.is(await accessOf(), true, 'kept');
  await withdraw.click();
  await question.getByRole('button', { name: 'Withdraw', exact: true }).click();
  await page.getByRole('button', { name: `Grant API access to ${partner.email}` }).waitFor();
  assert.is(await focused(), `Grant API access to ${partner.email}`, 'the focus stays on the contact');
  assert.is(await accessOf(), false, 'withdrawn');
});

test('a wrong token signs in nothing and is not kept; a right one is kept in the tab, until signing out', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const page = await portal.newPage();
  await page.goto(`${portal.base}/portal/operator/`);
  await assertAccessible(page, 'the sign-in page');
  await page.getByLabel('Admin token').fill('wrong-token-0123456789');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').getByText('This token was refused').waitFor();
  await assertAccessible(page, 'the refused sign-in');
  const stored = () =>
    page.evaluate(() => [sessionStorage.length, localStorage.length, document.cookie, location.hash] as const);
  assert.equal(await stored(), [0, 0, '', '']);
  await page.goto(`${portal.base}/portal/operator/#/accounts`);
  await page.getByLabel('Admin token').waitFor();
  assert.is(await page.getByRole('link', { name: 'Gauges' }).count(), 0, 'no page of the console');

  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Accounts', level: 1 }).waitFor();
  assert.equal(
    await page.evaluate(() => [sessionStorage.getItem('operator.adminToken'), localStorage.length, document.cookie]),
    [ADMIN_TOKEN, 0, ''],
  );
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Admin token').waitFor();
  assert.is(await page.evaluate(() => sessionStorage.length), 0);
});

test('axe finds nothing serious on any page of the console', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  orderId = await failedOrder();
  const page = await signedIn();
  await assertAccessible(page, 'Accounts');
  await searchAccount(page, failing.email);
  await page.getByRole('link', { name: failing.name }).waitFor();
  await assertAccessible(page, 'Accounts with results');
  await page.getByRole('link', { name: failing.name }).click();
  await page.getByRole('heading', { name: 'Failed deliveries' }).waitFor();
  await page.getByRole('link', { name: new RegExp(`of order ${orderId}`) }).waitFor();
  await assertAccessible(page, 'an account');
  await shot(page, 'operator-account');
  await page.getByRole('link', { name: new RegExp(`of order ${orderId}`) }).click();
  await page.getByRole('button', { name: 'Redeliver' }).waitFor();
  await assertAccessible(page, 'a delivery');
  await shot(page, 'operator-delivery');

  await page.getByRole('link', { name: 'Endpoints' }).click();
  await page.getByLabel('Show').selectOption('failing');
  await page.getByRole('link', { name: failing.name }).waitFor();
  await assertAccessible(page, 'Endpoints');
  await shot(page, 'operator-endpoints');

  await page.getByRole('link', { name: 'Deliveries' }).click();
  await page.getByLabel('Search by').selectOption('orderId');
  await page.getByLabel('Value').fill(orderId);
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('cell', { name: orderId }).first().waitFor();
  await assertAccessible(page, 'Deliveries with results');

  await page.getByRole('link', { name: 'Commands' }).click();
  await page.getByLabel('Command _cid').fill('nobody-sent-this');
  await page.getByRole('button', { name: 'Look up' }).click();
  await page.getByText('No account holds a command').waitFor();
  await assertAccessible(page, 'Commands, none found');
  const cid = await sentCommand();
  await page.getByLabel('Command _cid').fill(cid);
  await page.getByRole('button', { name: 'Look up' }).click();
  await page.getByRole('heading', { name: /RefreshOrder succeeded/ }).waitFor();
  await page.getByLabel("The command's result").getByText('CommandResultEvent').waitFor();
  await assertAccessible(page, 'Commands');
  await shot(page, 'operator-command');
  await page.getByRole('link', { name: 'deliveries of this _cid' }).click();
  await page.getByRole('cell', { name: 'CommandResultEvent' }).waitFor();
  assert.is(await page.getByLabel('Search by').inputValue(), 'cid');

  await page.getByRole('link', { name: 'Jobs' }).click();
  await page.getByLabel('Order id').fill(orderId);
  await page.getByRole('button', { name: 'Look up' }).click();
  await page.getByRole('link', { name: 'deliveries of this order' }).waitFor();
  await assertAccessible(page, 'Jobs');
  await shot(page, 'operator-job');

  await page.getByRole('link', { name: 'Gauges' }).click();
  await page.getByText('webhook_endpoints_failing').waitFor();
  await assertAccessible(page, 'Gauges');
  await shot(page, 'operator-gauges');
});

test.run();
