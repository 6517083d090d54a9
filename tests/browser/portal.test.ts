// The integrator portal in a real browser (issue 27): Debian's Chromium driven by playwright-core, against the real
// service on this run's database, with mails read from the file mailer's folder and webhooks sent to a local receiver.
// Without /usr/bin/chromium every test here counts as skipped, saying how to install it.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PORTAL_DIST } from '../../server/http/portal.ts';
import { testApp, uniqueEmail } from '../support/app.ts';
import { startReceiver } from '../support/receiver.ts';
import { closeAtEnd } from '../support/shared.ts';
import { skipUnless } from '../support/skip.ts';
import { assertAccessible, freePort, hasChromium, launchChromium, NO_CHROMIUM, screenshot, signInFromMail, bundleSize } from './support.ts';

const test = suite('portal in a browser');
let app: Awaited<ReturnType<typeof testApp>>;
let base = '';
let mailDir = '';
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let failing = false;
const user = (name: string) => ({ email: uniqueEmail(name), accountId: '', context: null as unknown as BrowserContext, page: null as unknown as Page });
const [partner, brand] = [user('portal-partner'), user('portal-brand')];
const orders: string[] = [];

test.before(async () => {
  if (!hasChromium) return;
  assert.ok(existsSync(join(PORTAL_DIST, 'index.html')), 'the portal is not built: npm run portal:build');
  const dataDir = mkdtempSync(join(tmpdir(), 'portal-test-'));
  mailDir = join(dataDir, 'mail');
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  app = await testApp({ DATA_DIR: dataDir, PUBLIC_URL: base, WEBHOOK_RETRY_SCHEDULE: '100ms', WEBHOOK_TIMEOUT_MS: '2000' });
  const server = createServer(app.app).listen(port, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closeAtEnd(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  app.worker.start();
  receiver = await startReceiver(() => (failing ? 500 : 200));
  browser = await launchChromium();
  for (const [who, role] of [[partner, 'partner'], [brand, 'brand']] as const) {
    who.accountId = (await app.admin.call<{ id: string }>('accounts.create', { name: `Portal ${role}`, role })).id;
    await app.admin.call('contacts.create', { accountId: who.accountId, email: who.email });
    who.context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    who.context.setDefaultTimeout(10_000);
    who.page = await who.context.newPage();
    who.page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) throw new Error(`CSP: ${message.text()}`); });
  }
});

// The worker stops with this suite: the suites after it share the database and see it still.
test.after(async () => {
  if (!hasChromium) return;
  await app.worker.stop();
  await browser.close();
});

const signIn = (page: Page, email: string) => signInFromMail(page, { base, mailDir, email, mailsSent: () => app.drainDeferred() });

test('sign-in from the mail link: the token leaves the address bar and history; a refused token says why', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const page = partner.page;
  await page.goto(`${base}/portal/`);
  await assertAccessible(page, 'sign-in');
  await screenshot(page, 'sign-in');
  await signIn(page, partner.email);
  assert.not.match(page.url(), /refresh=/);
  assert.ok(await page.evaluate(() => sessionStorage.getItem('portal.refreshToken')), 'the refresh token in sessionStorage');
  // localStorage keeps only the address this browser asked a link for (and a page to return to), never a token.
  const kept = await page.evaluate(() => Object.entries({ ...localStorage }));
  assert.ok(kept.every(([key]) => key === 'portal.linksAskedFor' || key === 'portal.pageAfterSignIn'), JSON.stringify(kept));
  assert.not.match(JSON.stringify(kept), /eyJ/, 'no token in localStorage');
  await page.goBack().catch(() => null);
  assert.not.match(page.url(), /refresh=/, 'the address with the token is not in the history');
  const stranger = await browser.newContext();
  const other = await stranger.newPage();
  await other.goto(`${base}/portal/#refresh=not-a-token`);
  await other.getByRole('alert').waitFor();
  assert.match(await other.getByRole('alert').innerText(), /token/i, 'the service\'s message');
  assert.not.match(other.url(), /refresh=/);
  await stranger.close();
});

test('Endpoint: a refused URL shows its issue beside the field; saved, it shows health; an example event arrives', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const page = partner.page;
  await page.goto(`${base}/portal/#/endpoint`);
  await page.getByText('no endpoint of its own yet').waitFor();
  await assertAccessible(page, 'endpoint (none yet)');
  await page.getByLabel('URL', { exact: true }).fill('ftp://example.com/hooks');
  await page.getByLabel('Transformer').selectOption('partner-format');
  await page.getByRole('button', { name: 'Save' }).click();
  const issue = page.locator('#url-issue');
  await issue.waitFor();
  assert.ok((await issue.innerText()).length > 0);
  assert.is(await page.getByLabel('URL', { exact: true }).getAttribute('aria-describedby'), 'url-issue', 'the issue is tied to its field');
  await assertAccessible(page, 'endpoint with an issue');
  await page.getByLabel('URL', { exact: true }).fill(receiver.url('/portal-hooks'));
  await page.getByLabel('New signature key (leave empty to keep the current one)').fill('portal-test-signing-key-0001');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved.').waitFor();
  await page.getByTestId('health').getByText(/Healthy|failing|Disabled/).waitFor();
  await page.getByRole('heading', { name: 'Rotate the signature key' }).waitFor();
  await page.getByLabel('Event type').selectOption('OrderStatusEvent');
  const before = receiver.received.length;
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  const result = page.getByTestId('example-result');
  await result.waitFor();
  assert.match(await result.innerText(), /OrderStatusEvent delivered .* status 200/);
  const arrived = (await receiver.until((r) => r.length > before)).at(-1)!;
  assert.is(arrived.payload._type, 'OrderStatusEvent');
  assert.is(arrived.headers['webhook-test'], '1');
  await page.getByLabel('New key (16 characters or more)').fill('portal-test-signing-key-0002');
  await page.getByRole('button', { name: 'Rotate the key' }).click();
  await page.getByText(/Rotated: webhooks are signed with both keys until/).waitFor();
  await assertAccessible(page, 'endpoint');
});

test('Deliveries: a failed delivery shows the answer; redelivered after the receiver recovers, it is delivered; redeliver failed since counts', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const page = partner.page;
  failing = true;
  const brandForJobs = (await app.admin.call<{ id: string }>('accounts.create', { name: 'Portal jobs brand', role: 'brand' })).id;
  for (let i = 0; i < 2; i++) {
    orders.push((await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brandForJobs, partnerId: partner.accountId })).apiId);
  }
  const failed = async () => (await app.http.get('/v3/webhook-deliveries?status=failed').set('authorization', `Bearer ${await accessTokenOf(partner.page)}`)).body.items.length;
  for (let i = 0; i < 100 && (await failed()) < 2; i++) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.is(await failed(), 2, 'two deliveries failed');
  await page.goto(`${base}/portal/#/deliveries`);
  await page.getByRole('link', { name: 'Endpoint' }).click();
  // What was shown before is shown at once and then asked again (stale while it revalidates): the sentence follows.
  await page.getByTestId('health').getByText(/^Failing since .*redeliver what failed/).waitFor();

  await page.goto(`${base}/portal/#/deliveries`);
  await page.getByLabel('Status').selectOption('failed');
  const rows = page.locator('tbody tr');
  await rows.first().waitFor();
  assert.is(await rows.count(), 2);
  assert.match(await rows.first().innerText(), /failed[\s\S]*500: .*failure 500/, 'the status and the start of the answer');
  await assertAccessible(page, 'deliveries');
  await screenshot(page, 'deliveries');
  failing = false;
  await rows.first().getByTestId('delivery-link').click();
  await page.getByRole('heading', { name: 'Delivery', level: 1 }).waitFor();
  await page.getByRole('heading', { name: 'Attempts' }).waitFor();
  await page.getByTestId('attempt').last().locator('summary').click(); // the oldest attempt, unfolded
  assert.match(await page.getByLabel('Response body of attempt 1').innerText(), /^failure 500/, 'the receiver\'s answer (§11)');
  assert.match(await page.getByLabel('Payload').innerText(), /"_type": "OrderStatusEvent"/);
  assert.match(await page.getByLabel('Request of attempt 1').innerText(), /webhook-signature/);
  await assertAccessible(page, 'a delivery');
  await screenshot(page, 'delivery');
  await page.getByRole('button', { name: /^Redeliver / }).click();
  // "queued" may be gone before it is seen: the receiver answers 200 now, and the worker is quick (delivery-timeline
  // shows "queued" while a delivery waits).
  await page.getByRole('status').getByText('queued').or(page.getByTestId('delivery-status').getByText('delivered')).first().waitFor();
  for (let i = 0; i < 50 && !/delivered/.test(await page.locator('dl.facts').innerText()); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    await page.getByRole('button', { name: 'Refresh' }).click();
  }
  assert.match(await page.locator('dl.facts').innerText(), /delivered/);

  await page.goto(`${base}/portal/#/deliveries`);
  await page.getByLabel('Created at or after (UTC)').fill(new Date(Date.now() - 3_600_000).toISOString().slice(0, 16));
  await page.getByRole('button', { name: 'Redeliver failed' }).click();
  await page.getByText('1 delivery is pending again.').waitFor();
  for (let i = 0; i < 100 && (await failed()) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.is(await failed(), 0);
  await page.getByLabel('Status').selectOption('delivered');
  await page.locator('tbody tr').first().waitFor();
});

const accessTokenOf = async (page: Page) => (await app.http.post('/v3/auth/access-token')
  .set('authorization', `Bearer ${await page.evaluate(() => sessionStorage.getItem('portal.refreshToken'))}`).send({})).body.access_token as string;

test('Events: the feed pages with next, back and forward move between pages, and an event opens to its JSON', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const page = partner.page;
  for (const apiId of orders) {
    for (const status of ['open', 'accepted', 'scheduled', 'appointment_confirmed', 'installing', 'installed', 'completed']) await app.admin.call('jobs.setStatus', { apiId, status }).catch(() => null);
  }
  await page.goto(`${base}/portal/#/events`);
  const items = page.locator('ul.events li');
  await items.first().waitFor();
  const [firstPage, firstId] = [await page.locator('ul.events').innerText(), await items.first().locator('code').innerText()];
  const next = page.getByRole('button', { name: 'Next' });
  assert.ok(await next.isEnabled(), 'a next page');
  await items.first().getByRole('button').click();
  await page.getByLabel(/^Event /).first().waitFor();
  await assertAccessible(page, 'events');
  await screenshot(page, 'events');
  await next.click();
  await page.waitForFunction((before) => document.querySelector('main')?.textContent?.includes('No newer events yet') || document.querySelector('ul.events')?.textContent !== before, firstPage);
  const [secondPage, secondUrl] = [await page.locator('main').innerText(), page.url()];
  assert.is.not(secondPage, firstPage);
  assert.match(secondUrl, /#\/events\/[^/]+$/, 'the page is in the address');
  await page.goBack();
  await page.locator('ul.events li code', { hasText: firstId }).first().waitFor();
  await page.goForward();
  await page.waitForFunction((text) => document.querySelector('main')?.innerText === text, secondPage);
  await page.getByRole('link', { name: 'Deliveries' }).click();
  await page.goBack();
  await page.waitForFunction((text) => document.querySelector('main')?.innerText === text, secondPage);
  assert.is(page.url(), secondUrl, 'back from another page: the same page of events');
});

test('Orders: a partner lists its orders (active, updatedSince) and opens one', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const page = partner.page;
  await page.goto(`${base}/portal/#/orders`);
  for (const id of orders) await page.getByRole('link', { name: id }).waitFor();
  await assertAccessible(page, 'orders');
  await screenshot(page, 'orders');
  await page.getByLabel('Only orders needing action').check();
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByText('No orders match.').waitFor(); // both are completed
  await page.getByLabel('Only orders needing action').uncheck();
  await page.getByLabel('Updated since (UTC)').fill(new Date(Date.now() + 3_600_000).toISOString().slice(0, 16));
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByText('No orders match.').waitFor();
  await page.goto(`${base}/portal/#/orders/${orders[0]}`);
  await page.getByLabel(`Order ${orders[0]}`).getByText(orders[0]!).first().waitFor();
  await assertAccessible(page, 'an order');
});

test('a brand finds a command result, and sees nothing of the partner', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const page = brand.page;
  await app.admin.call('webhookConfigs.upsert', { accountId: brand.accountId, scope: 'brand', url: null, transformer: 'default', version: '1.3.0' });
  await signIn(page, brand.email);
  const job = (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId })).apiId;
  const cid = `portal-${randomUUID()}`;
  const sent = await app.http.post('/v3/commands').set('authorization', `Bearer ${await accessTokenOf(page)}`)
    .send({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: job });
  assert.is(sent.status, 202, JSON.stringify(sent.body));
  await page.goto(`${base}/portal/#/commands`);
  await page.getByLabel(/Command id/).fill(cid);
  for (let i = 0; i < 50; i++) {
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.locator(`[aria-label="Result of ${cid}"], [role="status"]`).first().waitFor();
    if (await page.getByLabel(`Result of ${cid}`).count()) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.match(await page.getByLabel(`Result of ${cid}`).innerText(), /CommandResultEvent|CommandErrorEvent/);
  await assertAccessible(page, 'commands');
  await screenshot(page, 'commands');
  assert.is(await page.getByRole('link', { name: 'Orders' }).count(), 0, 'a brand has no Orders page');

  // The partner's data, asked for by the brand's portal: nothing.
  await page.goto(`${base}/portal/#/deliveries`);
  await page.getByText(/No deliveries yet|No more deliveries/).waitFor();
  await page.goto(`${base}/portal/#/events`);
  await page.locator('main').getByText(/No events yet|RefreshOrder|Command/).first().waitFor({ timeout: 5000 }).catch(() => null);
  const events = await page.locator('main').innerText();
  for (const id of orders) assert.not.ok(events.includes(id), 'no event of the partner\'s orders');
  const partnerDelivery = (await app.http.get('/v3/webhook-deliveries').set('authorization', `Bearer ${await accessTokenOf(partner.page)}`)).body.items[0].id as string;
  await page.goto(`${base}/portal/#/deliveries/${partnerDelivery}`);
  await page.getByRole('alert').waitFor();
  assert.match(await page.getByRole('alert').innerText(), /Request id/);
});

test('sign out: the back button shows nothing private', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const page = partner.page;
  await page.goto(`${base}/portal/#/deliveries`);
  await page.locator('tbody tr').first().waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to the integrator portal' }).waitFor();
  assert.is(await page.evaluate(() => sessionStorage.length), 0);
  await page.goBack();
  await page.getByRole('heading', { name: 'Sign in to the integrator portal' }).waitFor();
  assert.is(await page.locator('table').count(), 0);
  assert.not.match(await page.locator('body').innerText(), /failure 500|OrderStatusEvent/);
});

// Size only: how fast the page loads is measured by `npm run bench:portal-load` (docs/BENCHMARKS.md), never asserted here.
test('the bundle is under 250 KB gzipped; a fresh context renders the page, sent with its CSP and cacheable assets', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const { raw, gzipped } = bundleSize(PORTAL_DIST);
  const cold = await browser.newContext(); // nothing cached, no session
  const page = await cold.newPage();
  await page.goto(`${base}/portal/`);
  await page.getByRole('heading', { name: 'Sign in to the integrator portal' }).waitFor();
  await cold.close();
  const response = await fetch(`${base}/portal/`);
  assert.match(response.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  const asset = await fetch(`${base}/portal/assets/${readdirSync(join(PORTAL_DIST, 'assets'))[0]}`);
  assert.match(asset.headers.get('cache-control') ?? '', /max-age=31536000, immutable/);
  console.log(`portal: bundle ${(raw / 1024).toFixed(1)} KB, ${(gzipped / 1024).toFixed(1)} KB gzipped`);
  assert.ok(gzipped < 250 * 1024, `${gzipped} bytes gzipped`);
});

test.run();
