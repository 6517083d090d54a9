// Issue 34's first minute, as a new user has it: `SEED_DEMO=1 npm start` on the embedded database, the portal's sign-in
// with the link `npm run -s mail:last-link` prints, then the demo partner's failed delivery found from the Endpoint
// page, read (why it failed, attempt by attempt), and redelivered; the service's own process, Chromium, the helper.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ServiceProcess, startService } from '../support/process.ts';
import { onPostgres, skipUnless, skipWhen } from '../support/skip.ts';
import { assertAccessible, freePort, hasChromium, launchChromium, NO_CHROMIUM } from './support.ts';

const test = suite("the demo's first minute: sign in, find the failed delivery, read why, redeliver");
const root = join(import.meta.dirname, '..', '..');
const dataDir = mkdtempSync(join(tmpdir(), 'pbi-demo-walk-'));
let service: ServiceProcess | undefined;
let browser: Browser | undefined;
test.after(async () => {
  await browser?.close();
  await service?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const lastLink = async () =>
  (
    await promisify(execFile)(process.execPath, ['--import', 'tsx', 'server/last-mail.ts', 'link'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir },
    })
  ).stdout.trim();

test("SEED_DEMO=1: the master partner's endpoint is failing, its failed delivery tells why, and a redelivery is tried at once", async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  if (skipWhen(onPostgres, 'the embedded pass runs it')) return; // `npm start` on a fresh machine is the embedded default
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  service = startService({
    PGLITE_DIR: 'memory://',
    DATA_DIR: dataDir,
    SEED_DEMO: '1',
    PORT: String(port),
    PUBLIC_URL: base,
  });
  await service.listening;
  browser = await launchChromium();
  /** A fresh browser signed in as a new user does: the portal's form, then the link `npm run mail:last-link` prints. */
  let link = '';
  const signedIn = async (email: string) => {
    const page = await (await browser!.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${base}/portal/`);
    await page.getByLabel('E-mail address').fill(email);
    await page.getByRole('button', { name: 'Send me a link' }).click();
    await page.getByText('If the e-mail address is registered').waitFor();
    const before = link;
    for (
      const deadline = Date.now() + 10_000;
      link === before || !link.includes('#refresh=');
      await new Promise((r) => setTimeout(r, 200))
    ) {
      assert.ok(Date.now() < deadline, `no new sign-in link in the mail folder for ${email}`);
      link = await lastLink().catch(() => before);
    }
    assert.ok(link.startsWith(`${base}/portal/#refresh=`), link);
    await page.goto(link);
    return page;
  };
  const page = await signedIn('master@demo.example');
  await page.getByRole('heading', { name: 'Endpoint', level: 1 }).waitFor();
  assert.match(await page.getByTestId('health').innerText(), /^Failing since \d{4}-\d\d-\d\d [\d:]+ UTC/);

  await page.getByRole('link', { name: 'Deliveries', exact: true }).click();
  await page.getByLabel('Status').selectOption('failed');
  const rows = page.locator('tbody tr');
  await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
  assert.is(await rows.locator('td[data-label="Order"]').innerText(), 'demo-job-04');
  await assertAccessible(page, "the demo's failed deliveries");
  await rows.first().getByTestId('delivery-link').click();

  const attempts = page.getByTestId('attempt');
  await attempts.nth(7).waitFor();
  assert.is(await attempts.count(), 8, 'every attempt of the retry schedule');
  assert.match(await attempts.first().locator('summary').innerText(), /timeout: no complete answer within 10000 ms/);
  await attempts.last().locator('summary').click();
  assert.match(await page.getByLabel('Response body of attempt 1').innerText(), /Service Unavailable/);
  assert.match(await page.getByLabel('Request of attempt 1').innerText(), /webhook-signature/);
  assert.is(await page.getByTestId('delivery-status').innerText(), 'failed');

  await page.getByRole('button', { name: /^Redeliver / }).click();
  // The demo's URL is a reserved name: the redelivery's attempt is made at once, and fails for want of an address.
  await attempts.nth(8).waitFor();
  assert.match(await attempts.first().locator('summary').innerText(), /installer-hooks\.demo\.example|ENOTFOUND/);
  await page.getByTestId('delivery-status').getByText('failed').waitFor();
  await assertAccessible(page, "the demo's failed delivery, redelivered");

  // A child partner without an endpoint of its own is sent its webhooks at its master's: its Endpoint page says so, and
  // shows that endpoint's attempts.
  const child = await signedIn('child-a@demo.example');
  await child.getByText(/your webhooks go to your master account's endpoint/).waitFor();
  await child.getByText(/Attempts per hour over the last 24 hours: 0 answered 2xx, [1-9]\d* failed/).waitFor();
  await assertAccessible(child, "a child partner's Endpoint page");
});

test.run();
