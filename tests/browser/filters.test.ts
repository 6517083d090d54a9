// Issue 34: the lists filter as CONTRACT §10 lets them (deliveries by status, event type and order; events by order),
// and the filters live in the address: a filtered list can be reloaded, linked and left with the back button.
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { skipUnless } from '../support/skip.ts';
import { type Account, PHONE, scrollsSideways, startPortal } from './fixture.ts';
import { assertAccessible, hasChromium, NO_CHROMIUM } from './support.ts';

const test = suite('filters of the lists, in the address');
let portal: Awaited<ReturnType<typeof startPortal>>;
let partner: Account;
let page: Page;
const jobs: string[] = [];
type Listed = { id: string; orderId: string | null; status: string; eventType: string };
const get = async (path: string) =>
  (await portal.app.http.get(path).set('authorization', `Bearer ${await portal.accessTokenOf(page)}`)).body;
const shownIds = () =>
  page
    .locator('tbody tr [data-testid="delivery-link"]')
    .evaluateAll((links) => links.map((a) => decodeURIComponent(a.getAttribute('href')!.split('/').pop()!)));

test.before(async () => {
  if (!hasChromium) return;
  portal = await startPortal();
  partner = await portal.account('partner', '/filters');
  const brand = await portal.account('brand');
  page = await portal.newPage();
  await portal.signIn(page, partner.email);
  portal.state.answer = 500;
  jobs.push(
    (
      await portal.app.admin.call<{ apiId: string }>('jobs.create', {
        brandAccountId: brand.accountId,
        partnerId: partner.accountId,
      })
    ).apiId,
  );
  await portal.until(
    async () => (await get('/v3/webhook-deliveries?status=failed')).items?.length === 1,
    'a failed delivery',
  );
  portal.state.answer = 200;
  jobs.push(
    (
      await portal.app.admin.call<{ apiId: string }>('jobs.create', {
        brandAccountId: brand.accountId,
        partnerId: partner.accountId,
      })
    ).apiId,
  );
  await portal.app.admin.call('jobs.setStatus', { apiId: jobs[1], status: 'accepted' });
  await portal.until(
    async () => (await get('/v3/webhook-deliveries?status=delivered')).items?.length === 2,
    'two delivered',
  );
});

test.after(async () => {
  if (!hasChromium) return;
  await portal.stop();
});

test('Deliveries: status, event type and order filter the list as the API does, and each is in the address', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  await page.goto(`${portal.base}/portal/#/deliveries`);
  await page.locator('tbody tr').nth(2).waitFor();
  assert.equal(
    await shownIds(),
    ((await get('/v3/webhook-deliveries')).items as Listed[]).map((d) => d.id),
  );

  await page.getByLabel('Status').selectOption('failed');
  await page.waitForURL(/#\/deliveries\?status=failed$/);
  const failed = (await get('/v3/webhook-deliveries?status=failed')).items as Listed[];
  await page.waitForFunction((n) => document.querySelectorAll('tbody tr').length === n, failed.length);
  assert.equal(
    await shownIds(),
    failed.map((d) => d.id),
  );

  await page.getByLabel('Status').selectOption('');
  await page.getByLabel('Order').fill(jobs[1]!);
  await page.getByRole('button', { name: 'Filter', exact: true }).click();
  await page.waitForURL(new RegExp(`#/deliveries\\?orderId=${jobs[1]}$`));
  const ofOrder = (await get(`/v3/webhook-deliveries?orderId=${jobs[1]}`)).items as Listed[];
  assert.is(ofOrder.length, 2, "the second order's two events");
  await page.waitForFunction((n) => document.querySelectorAll('tbody tr').length === n, ofOrder.length);
  assert.equal(
    await shownIds(),
    ofOrder.map((d) => d.id),
  );
  assert.ok((await page.locator('td[data-label="Order"]').allInnerTexts()).every((t) => t === jobs[1]));

  await page.getByLabel('Event type').selectOption('InvoiceEvent');
  await page.waitForURL(
    new RegExp(
      `#/deliveries\\?orderId=${jobs[1]}&eventType=InvoiceEvent$|#/deliveries\\?eventType=InvoiceEvent&orderId=${jobs[1]}$`,
    ),
  );
  await page.getByText('No deliveries match these filters.').waitFor();
  await assertAccessible(page, 'deliveries, filtered to nothing');

  await page.goBack();
  await page.waitForFunction((n) => document.querySelectorAll('tbody tr').length === n, ofOrder.length);
  assert.is(await page.getByLabel('Event type').inputValue(), '', 'back: the filter before');
  assert.is(await page.getByLabel('Order').inputValue(), jobs[1]);
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await page.waitForURL(/#\/deliveries$/);
  await page.locator('tbody tr').nth(2).waitFor();

  // An order typed and not yet submitted, then a status chosen: both apply, as the fields show them.
  await page.getByLabel('Order').fill(jobs[1]!);
  await page.getByLabel('Status').selectOption('delivered');
  await page.waitForURL(
    new RegExp(`#/deliveries\\?(status=delivered&orderId=${jobs[1]}|orderId=${jobs[1]}&status=delivered)$`),
  );
  assert.is(await page.getByLabel('Order').inputValue(), jobs[1]);
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await page.waitForURL(/#\/deliveries$/);
});

test('a browser that says it is offline (a flag that can be wrong) still asks the service', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  await page.goto(`${portal.base}/portal/#/deliveries`);
  await page.reload(); // nothing cached: the filtered list must be asked for
  await page.locator('tbody tr').nth(2).waitFor();
  // What the browser tells the page when it thinks its network went away; the page and the service are still there.
  await page.evaluate(() => window.dispatchEvent(new Event('offline')));
  try {
    await page.getByLabel('Status').selectOption('failed');
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1, undefined, { timeout: 5000 });
    assert.match(await page.locator('tbody tr').innerText(), /failed/);
  } finally {
    await page.evaluate(() => window.dispatchEvent(new Event('online')));
  }
});

test('a filtered address opened as it is (a link from a mail, a reload) shows the filtered list, also on a phone', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const phone = await page
    .context()
    .browser()!
    .newContext({ viewport: PHONE })
    .then((c) => c.newPage());
  await portal.signIn(phone, partner.email);
  await phone.goto(`${portal.base}/portal/#/deliveries?status=failed&orderId=${jobs[0]}`);
  const failed = (await get(`/v3/webhook-deliveries?status=failed&orderId=${jobs[0]}`)).items as Listed[];
  assert.is(failed.length, 1);
  await phone.locator('tbody tr').first().waitFor();
  assert.is(await phone.locator('tbody tr').count(), 1);
  assert.is(await phone.getByLabel('Status').inputValue(), 'failed');
  assert.is(await phone.getByLabel('Order').inputValue(), jobs[0]);
  const sideways = await scrollsSideways(phone);
  assert.ok(
    sideways.scrollWidth <= sideways.width,
    `the filtered list scrolls sideways at 390 px: ${JSON.stringify(sideways)}`,
  );
  await phone.reload();
  await phone.locator('tbody tr').first().waitFor();
  assert.is(await phone.getByLabel('Status').inputValue(), 'failed', 'and after a reload');
  await phone.context().close();
});

test("Events: filtered by order, in feed order, in the address; a partner's order page links to its events and deliveries", async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const feed = (await get(`/v3/events?orderId=${jobs[1]}`)).items as { _eid: string; jobApiId: string }[];
  assert.is(feed.length, 2);
  await page.goto(`${portal.base}/portal/#/orders/${jobs[1]}`);
  await page.getByRole('link', { name: 'Its events' }).click();
  await page.waitForURL(new RegExp(`#/events\\?orderId=${jobs[1]}$`));
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="event"]').length === n, feed.length);
  assert.equal(
    await page.getByTestId('event').locator('code').allInnerTexts(),
    feed.map((e) => e._eid.slice(0, 8)),
  );
  assert.is(await page.getByLabel('Order').inputValue(), jobs[1]);
  await assertAccessible(page, 'events of an order');
  await page.getByRole('button', { name: 'All orders' }).click();
  await page.waitForURL(/#\/events$/);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="event"]').length === 3);

  await page.goto(`${portal.base}/portal/#/orders/${jobs[0]}`);
  await page.getByRole('link', { name: 'Its deliveries' }).click();
  await page.waitForURL(new RegExp(`#/deliveries\\?orderId=${jobs[0]}$`));
  await page.locator('tbody tr').first().waitFor();
  assert.equal(await page.locator('td[data-label="Order"]').allInnerTexts(), [jobs[0]!]);
});

test('Orders: the page and the filters are in the address; back shows the listing as it was filtered, its fields too', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const orderLinks = () => page.locator('td[data-label="Order"]').allInnerTexts();
  await page.goto(`${portal.base}/portal/#/orders`);
  for (const id of jobs) await page.getByRole('link', { name: id }).waitFor();
  await page.getByLabel('Only orders needing action').check();
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/#\/orders\?active=true$/);
  await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
  assert.equal(await orderLinks(), [jobs[1]!], 'the accepted order needs action, the new one not');
  await page.getByLabel('Updated since (UTC)').fill(new Date(Date.now() + 3_600_000).toISOString());
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/#\/orders\?active=true&updatedSince=\d{4}-/);
  await page.getByText('No orders match.').waitFor();

  await page.goBack();
  await page.waitForURL(/#\/orders\?active=true$/);
  await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
  assert.equal(
    [
      await page.getByLabel('Only orders needing action').isChecked(),
      await page.getByLabel('Updated since (UTC)').inputValue(),
    ],
    [true, ''],
  );
  await page.goBack();
  await page.waitForURL(/#\/orders$/);
  await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 2);
  assert.is(await page.getByLabel('Only orders needing action').isChecked(), false);
  await page.reload();
  await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 2);
});

test.run();
