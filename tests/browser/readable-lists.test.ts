// Issue 34: lists a person can read. Deliveries show time, event type, order, event id, status (the answer without the
// status said twice), attempts and next attempt; Events show time, type and the order, linked to it (a partner's to the
// order's page, a brand's to its events of that order).
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { skipUnless } from '../support/skip.ts';
import { type Account, startPortal } from './fixture.ts';
import { assertAccessible, hasChromium, NO_CHROMIUM } from './support.ts';

const test = suite('readable lists: deliveries and events');
let portal: Awaited<ReturnType<typeof startPortal>>;
let partner: Account;
let brand: Account;
let page: Page;
const jobs: string[] = [];
const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
const get = async (path: string, p: Page) =>
  (await portal.app.http.get(path).set('authorization', `Bearer ${await portal.accessTokenOf(p)}`)).body;
type Listed = {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  orderId?: string | null;
  attempts: unknown[];
};

test.before(async () => {
  if (!hasChromium) return;
  portal = await startPortal();
  partner = await portal.account('partner', '/lists-partner');
  brand = await portal.account('brand', '/lists-brand');
  portal.state.answer = 500;
  jobs.push(
    (
      await portal.app.admin.call<{ apiId: string }>('jobs.create', {
        brandAccountId: brand.accountId,
        partnerId: partner.accountId,
      })
    ).apiId,
  );
  page = await portal.newPage();
  await portal.signIn(page, partner.email);
  await portal.until(
    async () => (await get('/v3/webhook-deliveries?status=failed', page)).items?.length >= 1,
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
    async () => (await get('/v3/webhook-deliveries?status=delivered', page)).items?.length >= 2,
    'two delivered deliveries',
  );
});

test.after(async () => {
  if (!hasChromium) return;
  await portal.stop();
});

test('Deliveries: time, event type, order, short event id, status with the answer said once, attempts, next attempt', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const listed = (await get('/v3/webhook-deliveries', page)).items as Listed[];
  await page.goto(`${portal.base}/portal/#/deliveries`);
  const rows = page.locator('tbody tr');
  await rows.nth(listed.length - 1).waitFor();
  assert.equal(await page.locator('thead th').allInnerTexts(), [
    'Created (UTC)',
    'Event',
    'Order',
    'Event id',
    'Status',
    'Attempts',
    'Next attempt',
    'Actions',
  ]);
  for (const [i, d] of listed.entries()) {
    const cell = (label: string) => rows.nth(i).locator(`td[data-label="${label}"]`).innerText();
    assert.is(await cell('Event'), d.eventType);
    assert.is(await cell('Event id'), d.eventId.slice(0, 8));
    assert.is(
      await rows.nth(i).locator('td[data-label="Event id"] code').getAttribute('title'),
      d.eventId,
      'the whole id at hand',
    );
    // The order's slot: the API's `orderId` when it gives one (CONTRACT §10), a dash until then.
    assert.is(await cell('Order'), d.orderId ?? '—');
    if (d.orderId) assert.is(await rows.nth(i).getByTestId('order-link').getAttribute('href'), `#/orders/${d.orderId}`);
    assert.is(await cell('Attempts'), String(d.attempts.length));
    assert.match(await cell('Status'), new RegExp(`^${d.status}`));
    assert.not.match(await cell('Status'), /HTTP \d{3}/, 'the status code once');
  }
  const failed = rows.filter({ has: page.locator('.status.failed') }).first();
  assert.match(await failed.locator('td[data-label="Status"]').innerText(), /^failed\s+500: failure 500/);
  await assertAccessible(page, 'deliveries');
});

test('one delivery names its order, and a partner opens it from there', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const listed = (await get('/v3/webhook-deliveries?status=failed', page)).items as Listed[];
  await page.goto(`${portal.base}/portal/#/deliveries/${listed[0]!.id}`);
  await page.getByTestId('delivery-order').getByRole('link', { name: jobs[0] }).click();
  await page.getByRole('heading', { name: `Order ${jobs[0]}` }).waitFor();
});

test("Events: each shows its time, its type and its order; a partner's order links to the order", async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const feed = (await get('/v3/events?limit=20', page)).items as {
    _eid: string;
    _type: string;
    jobApiId: string;
    updatedAt: string;
  }[];
  assert.ok(feed.length >= 3, `${feed.length} events`);
  await page.goto(`${portal.base}/portal/#/events`);
  const items = page.getByTestId('event');
  await items.nth(feed.length - 1).waitFor();
  for (const [i, event] of feed.entries()) {
    const item = items.nth(i);
    assert.is(await item.getByTestId('event-time').innerText(), utc(event.updatedAt));
    assert.match(
      await item.innerText(),
      new RegExp(
        `^${utc(event.updatedAt)}\\s+${event._type}\\s+order ${event.jobApiId}\\s+Event\\s+${event._eid.slice(0, 8)}`,
      ),
    );
    assert.is(await item.getByTestId('order-link').getAttribute('href'), `#/orders/${event.jobApiId}`);
  }
  await assertAccessible(page, 'events');
  await items.last().getByTestId('order-link').click();
  await page.getByRole('heading', { name: `Order ${feed.at(-1)!.jobApiId}` }).waitFor();
  await page.getByLabel(`Order ${feed.at(-1)!.jobApiId}`).waitFor();
});

test("Events of a brand: the order by its orderId, opening the brand's events of that order (a brand has no order page)", async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const brandPage = await portal.newPage();
  await portal.signIn(brandPage, brand.email);
  const feed = (await get('/v3/events?limit=20', brandPage)).items as { orderId: string; updatedAt: string }[];
  assert.ok(feed.length >= 2);
  await brandPage.goto(`${portal.base}/portal/#/events`);
  const items = brandPage.getByTestId('event');
  await items.nth(feed.length - 1).waitFor();
  assert.equal(
    await items.getByTestId('event-order').allInnerTexts(),
    feed.map((e) => `order ${e.orderId}`),
  );
  assert.equal(
    await items.getByTestId('event-time').allInnerTexts(),
    feed.map((e) => utc(e.updatedAt)),
  );
  assert.equal(
    await items.getByTestId('order-link').evaluateAll((links) => links.map((a) => a.getAttribute('href'))),
    feed.map((e) => `#/events?orderId=${e.orderId}`),
  );
  await items.last().getByTestId('order-link').click();
  const own = feed.filter((e) => e.orderId === feed.at(-1)!.orderId);
  await brandPage.waitForFunction((n) => document.querySelectorAll('[data-testid="event"]').length === n, own.length);
  assert.is(
    await brandPage.getByLabel('Order', { exact: true }).inputValue(),
    feed.at(-1)!.orderId,
    'the filter shows the order',
  );
  await brandPage.context().close();
});

test.run();
