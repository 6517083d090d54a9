// What the suites of the integrator portal's tour share (portal.test.ts, portal-entry.test.ts): the real service on
// this run's database, served on a loopback port with its worker running, a webhook receiver, Chromium, and its users.
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import * as assert from 'uvu/assert';
import { PORTAL_DIST } from '../../server/http/portal.ts';
import { testApp, uniqueEmail } from '../support/app.ts';
import { startReceiver } from '../support/receiver.ts';
import { closeAtEnd } from '../support/shared.ts';
import { freePort, launchChromium, signInFromMail } from './support.ts';

// Set by startPortalTour, for the suite running (the suites run one after the other).
export let app: Awaited<ReturnType<typeof testApp>>;
export let base = '';
let mailDir = '';
export let browser: Browser;
export let receiver: Awaited<ReturnType<typeof startReceiver>>;
export const user = (name: string) => ({
  email: uniqueEmail(name),
  accountId: '',
  context: null as unknown as BrowserContext,
  page: null as unknown as Page,
});
type User = ReturnType<typeof user>;

/**
 * The service, the receiver (`answer` is its status for each webhook), Chromium, and for each user an account and a
 * page.
 */
export async function startPortalTour(users: [User, 'partner' | 'brand'][], answer: () => number) {
  assert.ok(existsSync(join(PORTAL_DIST, 'index.html')), 'the portal is not built: npm run portal:build');
  const dataDir = mkdtempSync(join(tmpdir(), 'portal-test-'));
  mailDir = join(dataDir, 'mail');
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  app = await testApp({
    DATA_DIR: dataDir,
    PUBLIC_URL: base,
    WEBHOOK_RETRY_SCHEDULE: '100ms',
    WEBHOOK_TIMEOUT_MS: '2000',
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
  receiver = await startReceiver(answer);
  browser = await launchChromium();
  for (const [who, role] of users) {
    who.accountId = (await app.admin.call<{ id: string }>('accounts.create', { name: `Portal ${role}`, role })).id;
    await app.admin.call('contacts.create', { accountId: who.accountId, email: who.email });
    who.context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    who.context.setDefaultTimeout(10_000);
    who.page = await who.context.newPage();
    who.page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) throw new Error(`CSP: ${message.text()}`);
    });
  }
}

// The worker stops with this suite: the suites after it share the database and see it still.
export async function stopPortalTour() {
  await app.worker.stop();
  await browser.close();
}

export const signIn = (page: Page, email: string) =>
  signInFromMail(page, { base, mailDir, email, mailsSent: () => app.drainDeferred() });
