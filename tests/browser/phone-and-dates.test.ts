// Issue 34: every page of the portal at 390 px without sideways scrolling, and one date format everywhere (tables,
// details and date fields), UTC said as UTC, whatever the browser's locale and time zone.
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { skipUnless } from '../support/skip.ts';
import { type Account, DESKTOP, PHONE, scrollsSideways, shot, startPortal } from './fixture.ts';
import { assertAccessible, hasChromium, NO_CHROMIUM } from './support.ts';

const test = suite('portal on a phone, and its one date format');
let portal: Awaited<ReturnType<typeof startPortal>>;
let partner: Account;
let brand: Account;
let phone: Page;
let deliveryId = '';
let orderId = '';

test.before(async () => {
  if (!hasChromium) return;
  portal = await startPortal();
  portal.state.answer = 500;
  partner = await portal.account('partner', '/phone-hooks');
  brand = await portal.account('brand');
  for (let i = 0; i < 2; i++) {
    orderId = (
      await portal.app.admin.call<{ apiId: string }>('jobs.create', {
        brandAccountId: brand.accountId,
        partnerId: partner.accountId,
      })
    ).apiId;
  }
  // A browser of another locale and time zone than UTC's: what it shows must not depend on them.
  phone = await portal.newPage({
    viewport: PHONE,
    locale: 'en-US',
    timezoneId: 'America/New_York',
    isMobile: true,
    hasTouch: true,
  });
  await portal.signIn(phone, partner.email);
  const token = await portal.accessTokenOf(phone);
  await portal.until(
    async () =>
      (await portal.app.http.get('/v3/webhook-deliveries?status=failed').set('authorization', `Bearer ${token}`)).body
        .items?.length === 2,
    'two failed deliveries',
  );
  deliveryId = (await portal.app.http.get('/v3/webhook-deliveries').set('authorization', `Bearer ${token}`)).body
    .items[0].id;
});

test.after(async () => {
  if (!hasChromium) return;
  await portal.stop();
});

/** Opens a page of the portal and waits for `ready`; then: no sideways scroll, nothing serious for axe. */
async function fitsThePhone(page: Page, hash: string, ready: (page: Page) => Promise<unknown>, what: string) {
  await page.goto(`${portal.base}/portal/${hash}`);
  await ready(page);
  const { width, scrollWidth, widest } = await scrollsSideways(page);
  assert.ok(width <= PHONE.width, `the viewport is ${width} px wide`);
  assert.ok(
    scrollWidth <= PHONE.width,
    `${what} at ${PHONE.width} px is ${scrollWidth} px wide (first too wide: ${widest})`,
  );
  await assertAccessible(page, `${what} at ${PHONE.width} px`);
  await shot(page, `${what.toLowerCase().replace(/ /g, '-')}-390`);
}

test("at 390 px every page fits the screen: no sideways scrolling, and the Deliveries row's attempts and Redeliver are on screen", async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  await fitsThePhone(phone, '#/endpoint', (p) => p.getByTestId('health').waitFor(), 'Endpoint');
  await fitsThePhone(phone, '#/deliveries', (p) => p.locator('tbody tr').nth(1).waitFor(), 'Deliveries');
  const row = phone.locator('tbody tr').first();
  for (const cell of [row.locator('td[data-label="Attempts"]'), row.getByRole('button', { name: /^Redeliver / })]) {
    const box = (await cell.boundingBox())!;
    assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width, `on screen: ${JSON.stringify(box)}`);
  }
  assert.is(await row.locator('td[data-label="Attempts"]').innerText(), '2');
  await shot(phone, 'deliveries-390');
  await fitsThePhone(
    phone,
    `#/deliveries/${deliveryId}`,
    (p) => p.getByTestId('attempt').first().waitFor(),
    'one delivery',
  );
  await phone.getByTestId('attempt').first().locator('summary').click();
  await phone.getByLabel('Request of attempt 2').waitFor();
  assert.ok((await scrollsSideways(phone)).scrollWidth <= PHONE.width, 'an unfolded attempt fits too');
  await shot(phone, 'delivery-390');
  await fitsThePhone(phone, '#/events', (p) => p.getByTestId('event').first().waitFor(), 'Events');
  await phone.getByTestId('event').first().getByRole('button').click();
  await phone
    .getByLabel(/^Event /)
    .first()
    .waitFor();
  assert.ok((await scrollsSideways(phone)).scrollWidth <= PHONE.width, 'an unfolded event fits too');
  await fitsThePhone(phone, '#/orders', (p) => p.getByRole('link', { name: orderId }).waitFor(), 'Orders');
  await fitsThePhone(phone, `#/orders/${orderId}`, (p) => p.getByLabel(`Order ${orderId}`).waitFor(), 'one order');

  const brandPhone = await portal.newPage({ viewport: PHONE, isMobile: true });
  await portal.signIn(brandPhone, brand.email);
  await fitsThePhone(brandPhone, '#/commands', (p) => p.getByLabel(/Command id/).waitFor(), 'Commands');
  const signedOut = await portal.newPage({ viewport: PHONE, isMobile: true });
  await fitsThePhone(
    signedOut,
    '',
    (p) => p.getByRole('heading', { name: 'Sign in to the integrator portal' }).waitFor(),
    'Sign in',
  );
  await brandPhone.context().close();
  await signedOut.context().close();
});

test('between a phone and a desktop (600 to 1100 px) the Deliveries table does not scroll sideways either', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  for (const width of [600, 800, 1024, 1100]) {
    await phone.setViewportSize({ width, height: 900 });
    await phone.goto(`${portal.base}/portal/#/deliveries`);
    await phone.locator('tbody tr').nth(1).waitFor();
    const { scrollWidth, widest } = await scrollsSideways(phone);
    assert.ok(scrollWidth <= width, `Deliveries at ${width} px is ${scrollWidth} px wide (first too wide: ${widest})`);
  }
  await phone.setViewportSize(PHONE);
});

// The format: 2026-11-29 05:50:12 UTC. Dates of another shape: 29/11/2026, 11/28/2026, "05:50 AM", "Nov 28".
const ONE_FORMAT = /\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\b/g;
const OTHER_FORMATS =
  /\b\d{1,2}\/\d{1,2}\/\d{2,4}\b|\b\d{1,2}:\d{2}(:\d{2})? ?[AP]M\b|\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{1,2}\b|\d{4}-\d{2}-\d{2}T\d{2}/;

/** The dates the page writes itself (the JSON it shows as sent, `pre`, keeps the wire's ISO 8601). */
async function datesOf(page: Page, what: string): Promise<string[]> {
  const text = await page.locator('main').evaluate((main: HTMLElement) => {
    const pres = Array.from(main.querySelectorAll('pre'));
    for (const pre of pres) pre.style.display = 'none';
    const seen = main.innerText;
    for (const pre of pres) pre.style.display = '';
    return seen;
  });
  assert.not.match(text, OTHER_FORMATS, `${what}: a date of another format`);
  return [...text.matchAll(ONE_FORMAT)].map((m) => m[0]);
}

test('one date format in tables, details and date fields: UTC as UTC, in a browser set to en-US and New York', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const page = await portal.newPage({ viewport: DESKTOP, locale: 'en-US', timezoneId: 'America/New_York' });
  await portal.signIn(page, partner.email);
  const token = await portal.accessTokenOf(page);
  const listed = (await portal.app.http.get('/v3/webhook-deliveries').set('authorization', `Bearer ${token}`)).body
    .items as { createdAt: string }[];

  await page.goto(`${portal.base}/portal/#/deliveries`);
  await page.locator('tbody tr').nth(1).waitFor();
  const created = await page.locator('tbody tr td[data-label="Created"]').allInnerTexts();
  const expected = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
  assert.equal(
    created,
    listed.map((d) => expected(d.createdAt)),
    "the list's times, in UTC",
  );
  assert.ok((await datesOf(page, 'Deliveries')).length >= 2);
  await shot(page, 'deliveries-desktop');

  // Date fields: text that takes the format it shows, never the browser's date picker (mm/dd/yyyy).
  assert.is(await page.locator('input[type="date"], input[type="datetime-local"]').count(), 0, 'no locale date picker');
  const since = page.getByLabel('Created at or after (UTC)');
  assert.match(
    await since.inputValue(),
    /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:00 UTC$/,
    'the field starts in the format it shows',
  );
  await since.fill('11/28/2026');
  await page.getByRole('button', { name: 'Redeliver failed' }).click();
  await page.locator('#since-issue').waitFor();
  assert.is(await since.getAttribute('aria-invalid'), 'true');
  assert.is(await page.getByText(/pending again/).count(), 0, 'nothing sent for a date that is not one');
  await since.fill(expected(new Date(Date.now() + 3_600_000).toISOString()));
  await page.getByRole('button', { name: 'Redeliver failed' }).click();
  await page.getByText('0 deliveries are pending again.').waitFor();
  await since.fill('2020-01-01T00:00:00+01:00');
  await page.getByRole('button', { name: 'Redeliver failed' }).click();
  await page.getByText('2 deliveries are pending again.').waitFor();

  const delivery = (
    await portal.app.http.get(`/v3/webhook-deliveries/${deliveryId}`).set('authorization', `Bearer ${token}`)
  ).body as { createdAt: string; attempts: { at: string }[] };
  await page.goto(`${portal.base}/portal/#/deliveries/${deliveryId}`);
  await page.getByTestId('attempt').first().waitFor();
  const shown = await datesOf(page, 'one delivery');
  assert.ok(shown.includes(expected(delivery.createdAt)), 'the creation time');
  assert.ok(shown.includes(expected(delivery.attempts[0]!.at)), "the first attempt's time");
  await page.getByTestId('attempt').first().locator('summary').click();
  await shot(page, 'delivery-desktop');

  await page.goto(`${portal.base}/portal/#/orders`);
  await page.getByRole('link', { name: orderId }).waitFor();
  assert.ok((await datesOf(page, 'Orders')).length >= 2);
  const updatedSince = page.getByLabel('Updated since (UTC)');
  await updatedSince.fill('tomorrow');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.locator('#updatedSince-issue').waitFor();
  await page.getByRole('link', { name: orderId }).waitFor(); // the listing as it was
  await updatedSince.fill(expected(new Date(Date.now() + 3_600_000).toISOString()));
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByText('No orders match.').waitFor();
  await assertAccessible(page, 'orders with a date field');

  await page.goto(`${portal.base}/portal/#/endpoint`);
  await page
    .getByTestId('health')
    .getByText(/^Failing since \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC:/)
    .waitFor();
  await datesOf(page, 'Endpoint');
  await page.context().close();
});

test.run();
