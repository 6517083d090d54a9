// Issue 34: the Endpoint page's health chart is drawn from the endpoint's real attempts (GET
// /v3/webhook-deliveries/stats), a key the service makes is shown once, copies, and verifies the webhooks that follow,
// and the public key shown for asymmetric signatures verifies their v1a signatures with no shared secret (CONTRACT §10,
// §11).
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { verifyAsymmetricWebhook, verifyWebhook } from '../../examples/verify-webhook.ts';
import { skipUnless } from '../support/skip.ts';
import { type Account, PHONE, scrollsSideways, startPortal } from './fixture.ts';
import { assertAccessible, hasChromium, NO_CHROMIUM, screenshot } from './support.ts';

const test = suite('the Endpoint page: health chart and keys');
let portal: Awaited<ReturnType<typeof startPortal>>;
let partner: Account;
let brand: Account;
let page: Page;
type Attempt = { statusCode: number | null };
const get = async (path: string) =>
  (await portal.app.http.get(path).set('authorization', `Bearer ${await portal.accessTokenOf(page)}`)).body;
const ok = (a: Attempt) => a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300;

/** A new order for the partner, and the first webhook of it the receiver gets. */
async function newOrderReceived() {
  const before = portal.receiver.received.length;
  const { apiId } = await portal.app.admin.call<{ apiId: string }>('jobs.create', {
    brandAccountId: brand.accountId,
    partnerId: partner.accountId,
  });
  const received = await portal.receiver.until((r) =>
    r.slice(before).some((x) => x.payload.jobApiId === apiId && x.answered === 200),
  );
  return received.slice(before).find((x) => x.payload.jobApiId === apiId && x.answered === 200)!;
}

test.before(async () => {
  if (!hasChromium) return;
  portal = await startPortal();
  partner = await portal.account('partner', '/keys');
  brand = await portal.account('brand');
  const context = await portal.browser.newContext({
    viewport: { width: 1100, height: 900 },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  context.setDefaultTimeout(10_000);
  page = await context.newPage();
  await portal.signIn(page, partner.email);
});

test.after(async () => {
  if (!hasChromium) return;
  await portal.stop();
});

test('the sign-in page says where local mail goes (no SMTP_URL): npm run mail:last-link', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const fresh = await portal.newPage();
  await fresh.goto(`${portal.base}/portal/`);
  await fresh.getByLabel('E-mail address').fill(partner.email);
  await fresh.getByRole('button', { name: 'Send me a link' }).click();
  assert.match(await fresh.getByTestId('local-mail').innerText(), /npm run mail:last-link/);
  await assertAccessible(fresh, 'sign-in, link sent');
  await fresh.context().close();
});

test("the chart counts the endpoint's real attempts, answered 2xx against failed, per hour and per day", async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  portal.state.answer = 500;
  const { apiId } = await portal.app.admin.call<{ apiId: string }>('jobs.create', {
    brandAccountId: brand.accountId,
    partnerId: partner.accountId,
  });
  await portal.until(
    async () => (await get('/v3/webhook-deliveries?status=failed')).items?.length === 1,
    'a failed delivery',
  );
  portal.state.answer = 200;
  await portal.app.admin.call('jobs.setStatus', { apiId, status: 'accepted' });
  await portal.until(
    async () => (await get('/v3/webhook-deliveries?status=delivered')).items?.length === 1,
    'a delivered one',
  );
  const attempts = ((await get('/v3/webhook-deliveries')).items as { attempts: Attempt[] }[]).flatMap(
    (d) => d.attempts,
  );
  const [succeeded, failed] = [attempts.filter(ok).length, attempts.filter((a) => !ok(a)).length];
  assert.ok(succeeded >= 1 && failed >= 2, `${succeeded} and ${failed}`);

  await page.reload(); // the page signed in on (its chart is asked again every minute)
  const summary = page.getByTestId('health-summary');
  await page
    .getByText(`Attempts per hour over the last 24 hours: ${succeeded} answered 2xx, ${failed} failed.`, {
      exact: true,
    })
    .waitFor();
  assert.is(
    await page.getByTestId('health-chart').getAttribute('aria-label'),
    await summary.innerText(),
    'the chart says it too',
  );
  await page.getByText('The numbers').click();
  const rows = page.getByTestId('health-table').locator('tbody tr');
  const cells = await rows.evaluateAll((trs) =>
    trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent)),
  );
  assert.is(
    cells.reduce((n, c) => n + Number(c[1]), 0),
    succeeded,
  );
  assert.is(
    cells.reduce((n, c) => n + Number(c[2]), 0),
    failed,
  );
  const stats = await get('/v3/webhook-deliveries/stats');
  const busy = (stats.items as { start: string; succeeded: number; failed: number }[]).filter(
    (b) => b.succeeded + b.failed > 0,
  );
  assert.equal(
    cells.map((c) => [c[1], c[2]]),
    busy.map((b) => [String(b.succeeded), String(b.failed)]),
  );

  // Drawn: both series' colours are on the canvas (stacked bars of the answered and the failed).
  const painted = await page.getByTestId('health-chart').evaluate((canvas: HTMLCanvasElement) => {
    const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    const seen = { blue: false, orange: false };
    for (let i = 0; i < data.length; i += 4) {
      if (data[i] === 0x0b && data[i + 1] === 0x57 && data[i + 2] === 0xd0) seen.blue = true;
      if (data[i] === 0xf2 && data[i + 1] === 0x9f && data[i + 2] === 0x3d) seen.orange = true;
    }
    return seen;
  });
  assert.equal(painted, { blue: true, orange: true });
  await screenshot(page, 'endpoint-health');

  await page.getByRole('button', { name: 'Last 30 days' }).click();
  await page
    .getByText(`Attempts per day over the last 30 days: ${succeeded} answered 2xx, ${failed} failed.`, { exact: true })
    .waitFor();
  assert.is(await page.getByRole('button', { name: 'Last 30 days' }).getAttribute('aria-pressed'), 'true');
  await assertAccessible(page, 'endpoint with its chart');
});

test('a key made by the service: shown once, copied, and it verifies the webhooks that follow', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  await page.goto(`${portal.base}/portal/#/endpoint`);
  await page.getByRole('heading', { name: 'Signature key', exact: true }).waitFor();
  await page.getByRole('button', { name: 'Generate a key' }).click();
  const field = page.getByTestId('generated-key');
  await field.waitFor();
  const key = await field.inputValue();
  assert.match(key, /^whsec_[A-Za-z0-9+/]{43}=$/, 'whsec_ and the base64 of 32 bytes');
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByText('Copied.').waitFor();
  assert.is(await page.evaluate(() => navigator.clipboard.readText()), key);
  await assertAccessible(page, 'endpoint with a new key');
  await page.getByRole('heading', { name: 'Rotate the signature key' }).waitFor();

  const arrived = await newOrderReceived();
  const event = verifyWebhook(arrived.body, arrived.headers, key);
  assert.is(event._type, 'OrderStatusEvent');
  assert.throws(() => verifyWebhook(arrived.body, arrived.headers, `whsec_${Buffer.alloc(32, 1).toString('base64')}`));

  await page.reload();
  await page.getByRole('heading', { name: 'Rotate the signature key' }).waitFor();
  assert.not.ok((await page.content()).includes(key), 'never shown again');
});

test('asymmetric signatures: turned on, the shown public key verifies v1a; a new pair keeps the previous one shown for the window', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  await page.goto(`${portal.base}/portal/#/endpoint`);
  await page.getByLabel('Asymmetric signatures (v1a)').check();
  await page.getByRole('button', { name: 'Save' }).click();
  const shown = page.getByTestId('public-key');
  await shown.waitFor();
  const publicKey = await shown.inputValue();
  assert.match(publicKey, /^whpk_[A-Za-z0-9+/]{43}=$/);
  assert.is((await await get('/v3/webhook-config')).publicKey, publicKey);

  const arrived = await newOrderReceived();
  assert.match(String(arrived.headers['webhook-signature']), /(^| )v1a,/);
  assert.is(verifyAsymmetricWebhook(arrived.body, arrived.headers, publicKey)._type, 'OrderStatusEvent');
  assert.throws(() =>
    verifyAsymmetricWebhook(arrived.body.replace('OrderStatusEvent', 'OrderStatusEvenT'), arrived.headers, publicKey),
  );

  await page.getByRole('button', { name: 'Make a new key pair' }).click();
  await page
    .getByText('A new key pair: webhooks are signed with both pairs for 24 hours; copy the new public key below.')
    .waitFor();
  await page.getByTestId('previous-public-key').waitFor();
  assert.is(await page.getByTestId('previous-public-key').inputValue(), publicKey);
  const next = await page.getByTestId('public-key').inputValue();
  assert.is.not(next, publicKey);
  const later = await newOrderReceived();
  assert.is(verifyAsymmetricWebhook(later.body, later.headers, next)._type, 'OrderStatusEvent');
  await assertAccessible(page, 'endpoint with public keys');
  await page.getByRole('heading', { name: 'Rotate the signature key' }).scrollIntoViewIfNeeded();
  await screenshot(page, 'endpoint-keys');
});

test('the Endpoint page with its chart and keys fits a phone', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  await page.setViewportSize(PHONE);
  await page.goto(`${portal.base}/portal/#/endpoint`);
  await page.getByTestId('health-summary').waitFor();
  await page.getByTestId('public-key').waitFor();
  const sideways = await scrollsSideways(page);
  assert.ok(
    sideways.scrollWidth <= sideways.width,
    `the Endpoint page scrolls sideways at 390 px: ${JSON.stringify(sideways)}`,
  );
  await assertAccessible(page, 'endpoint at 390 px');
});

test.run();
