// What the portal's browser suites share: the real service on this run's database, served on a loopback port with its
// worker running, a webhook receiver whose answer each suite chooses, Chromium, and accounts signed in through the
// mail.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import * as assert from 'uvu/assert';
import { testApp, uniqueEmail } from '../support/app.ts';
import { startReceiver } from '../support/receiver.ts';
import { closeAtEnd } from '../support/shared.ts';
import { freePort, launchChromium, mailedLink, signInFromMail } from './support.ts';

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 900 };
export type Account = { accountId: string; contactId: string; email: string; name: string };

/** The service with the portal, its worker started; `answer` is the receiver's status for each webhook. */
export async function startPortal(env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'portal-test-'));
  const mailDir = join(dataDir, 'mail');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const app = await testApp({
    DATA_DIR: dataDir,
    PUBLIC_URL: base,
    WEBHOOK_RETRY_SCHEDULE: '100ms',
    WEBHOOK_TIMEOUT_MS: '2000',
    ...env,
  });
  const server = createServer(app.app).listen(port, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closeAtEnd(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  app.worker.start();
  const state = { answer: 200 };
  const receiver = await startReceiver(() => state.answer);
  const browser: Browser = await launchChromium();

  /**
   * A new account of `role` with one contact with API access, and an endpoint at the receiver when `hooks` is given.
   */
  const account = async (role: 'partner' | 'brand', hooks?: string): Promise<Account> => {
    const email = uniqueEmail(`ui-${role}`);
    const name = `UI ${role} ${email.slice(6, 14)}`;
    const accountId = (await app.admin.call<{ id: string }>('accounts.create', { name, role })).id;
    const contactId = (await app.admin.call<{ id: string }>('contacts.create', { accountId, email })).id;
    if (hooks) {
      await app.admin.call('webhookConfigs.upsert', {
        accountId,
        scope: role,
        url: receiver.url(hooks),
        transformer: role === 'partner' ? 'partner-format' : 'default',
        version: '1.3.0',
      });
    }
    return { accountId, contactId, email, name };
  };

  /** A page of its own (a fresh context: its own sessionStorage), failing on any CSP report. */
  const newPage = async (options: BrowserContextOptions = {}): Promise<Page> => {
    const context = await browser.newContext({ viewport: DESKTOP, ...options });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) throw new Error(`CSP: ${message.text()}`);
    });
    return page;
  };

  /** The sign-in link the service mails to `email`, asked for without a browser. */
  const link = async (email: string) => {
    const asked = await app.http.post('/v3/auth/login').send({ email });
    assert.is(asked.status, 200);
    await app.drainDeferred();
    return mailedLink(mailDir, email);
  };

  const signIn = (page: Page, email: string) =>
    signInFromMail(page, { base, mailDir, email, mailsSent: () => app.drainDeferred() });

  /** An access token for the session the page holds, for API calls the test makes itself. */
  const accessTokenOf = async (page: Page) =>
    (
      await app.http
        .post('/v3/auth/access-token')
        .set('authorization', `Bearer ${await page.evaluate(() => sessionStorage.getItem('portal.refreshToken'))}`)
        .send({})
    ).body.access_token as string;

  /** Waits until `check` holds (polling every 100 ms, 10 s at most). */
  const until = async (check: () => Promise<boolean>, what: string) => {
    for (let i = 0; i < 100; i++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.unreachable(`timed out waiting for ${what}`);
  };

  const stop = async () => {
    await app.worker.stop();
    await browser.close();
  };
  return { app, base, mailDir, receiver, state, browser, account, newPage, link, signIn, accessTokenOf, until, stop };
}

/**
 * Screenshots for a reader of a change (not for the docs): taken into `PORTAL_SHOTS` when it names a folder, never
 * otherwise.
 */
export async function shot(page: Page, name: string) {
  const dir = process.env.PORTAL_SHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

/** Whether the page scrolls sideways: its document is wider than its viewport. */
export async function scrollsSideways(page: Page): Promise<{ width: number; scrollWidth: number; widest: string }> {
  // A viewport made narrower is laid out again by resize observers (the chart's among them) in later frames: the page
  // is measured until it fits, or for 3 s, and the last measure is answered.
  const deadline = Date.now() + 3000;
  for (;;) {
    const measured = await measureSideways(page);
    if (measured.scrollWidth <= measured.width || Date.now() > deadline) return measured;
    await page.waitForTimeout(100);
  }
}

function measureSideways(page: Page): Promise<{ width: number; scrollWidth: number; widest: string }> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    let widest = '';
    for (const element of Array.from(document.querySelectorAll('body *'))) {
      const box = element.getBoundingClientRect();
      if (box.right > width + 0.5 && !widest)
        widest = `${element.tagName.toLowerCase()}.${element.className} (right ${Math.round(box.right)})`;
    }
    return { width, scrollWidth: document.documentElement.scrollWidth, widest };
  });
}
