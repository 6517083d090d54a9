// A partner's first steps in the integrator portal, in a real browser (issue 27): the sign-in link, its endpoint set up
// and tried, and what a fresh browser loads. Without /usr/bin/chromium every test here counts as skipped.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PORTAL_DIST } from '../../server/http/portal.ts';
import { skipUnless } from '../support/skip.ts';
import { base, browser, receiver, signIn, startPortalTour, stopPortalTour, user } from './portal-tour.ts';
import { assertAccessible, bundleSize, hasChromium, NO_CHROMIUM, screenshot } from './support.ts';

const test = suite('portal in a browser: first steps');
const partner = user('portal-partner');

test.before(async () => {
  if (!hasChromium) return;
  await startPortalTour([[partner, 'partner']], () => 200);
});

test.after(async () => {
  if (!hasChromium) return;
  await stopPortalTour();
});

test('sign-in from the mail link: the token leaves the address bar and history; a refused token says why', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const page = partner.page;
  await page.goto(`${base}/portal/`);
  await assertAccessible(page, 'sign-in');
  await screenshot(page, 'sign-in');
  await signIn(page, partner.email);
  assert.not.match(page.url(), /refresh=/);
  assert.ok(
    await page.evaluate(() => sessionStorage.getItem('portal.refreshToken')),
    'the refresh token in sessionStorage',
  );
  // localStorage keeps only the address this browser asked a link for (and a page to return to), never a token.
  const kept = await page.evaluate(() => Object.entries({ ...localStorage }));
  assert.ok(
    kept.every(([key]) => key === 'portal.linksAskedFor' || key === 'portal.pageAfterSignIn'),
    JSON.stringify(kept),
  );
  assert.not.match(JSON.stringify(kept), /eyJ/, 'no token in localStorage');
  await page.goBack().catch(() => null);
  assert.not.match(page.url(), /refresh=/, 'the address with the token is not in the history');
  const stranger = await browser.newContext();
  const other = await stranger.newPage();
  await other.goto(`${base}/portal/#refresh=not-a-token`);
  await other.getByRole('alert').waitFor();
  assert.match(await other.getByRole('alert').innerText(), /token/i, "the service's message");
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
  assert.is(
    await page.getByLabel('URL', { exact: true }).getAttribute('aria-describedby'),
    'url-issue',
    'the issue is tied to its field',
  );
  await assertAccessible(page, 'endpoint with an issue');
  await page.getByLabel('URL', { exact: true }).fill(receiver.url('/portal-hooks'));
  await page.getByLabel('New signature key (leave empty to keep the current one)').fill('portal-test-signing-key-0001');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved.').waitFor();
  await page
    .getByTestId('health')
    .getByText(/Healthy|failing|Disabled/)
    .waitFor();
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

// Size only: how fast the page loads is measured by `npm run bench:portal-load` (docs/BENCHMARKS.md), never asserted
// here.
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
