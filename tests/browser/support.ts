import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, type ConsoleMessage, chromium, type Page, type Request } from 'playwright-core';
import * as assert from 'uvu/assert';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const NO_CHROMIUM = `needs Chromium at ${CHROMIUM} (install it: apt-get install -y chromium)`;

/** Debian's Chromium, headless, with nothing reaching out to the network on its own. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-default-apps',
      '--disable-extensions',
      '--metrics-recording-only',
      '--no-default-browser-check',
    ],
  });
}

/** A loopback port free just now, so that the app can be told its public address before it listens. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The portal link of the newest mail to `email` in the file mailer's folder (quoted-printable undone). */
export async function mailedLink(mailDir: string, email: string): Promise<string> {
  const files = (await readdir(mailDir))
    .filter((f) => f.endsWith('.eml'))
    .sort()
    .reverse();
  for (const file of files) {
    const text = (await readFile(join(mailDir, file), 'utf8')).replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    if (!text.toLowerCase().includes(`to: ${email.toLowerCase()}`)) continue;
    const link = text.split(/\r?\n/).find((line) => /^https?:\/\/\S+\/portal\/#refresh=/.test(line));
    assert.ok(link, `no portal link in the mail to ${email}`);
    return link;
  }
  throw new Error(`no mail to ${email} in ${mailDir}`);
}

/** axe-core on the page as it is: no serious or critical violation. */
export async function assertAccessible(page: Page, what: string) {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const grave = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.equal(
    grave.map(
      (v) =>
        `${v.id}: ${v.help} (${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(', ')})`,
    ),
    [],
    `accessibility of ${what}`,
  );
}

/** Screenshots for docs/integrators.md, taken when UPDATE_SCREENSHOTS=1 (they would change at every run otherwise). */
export async function screenshot(page: Page, name: string) {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  await page.screenshot({
    path: join(import.meta.dirname, '..', '..', 'docs', 'images', `portal-${name}.png`),
    fullPage: true,
  });
}

/**
 * Signs in through the portal's own form, then follows the link of the mail it sent; answers how long the link took to
 * the Endpoint page.
 */
export async function signInFromMail(
  page: Page,
  o: { base: string; mailDir: string; email: string; mailsSent: () => Promise<unknown> },
) {
  await page.goto(`${o.base}/portal/`);
  await page.getByLabel('E-mail address').fill(o.email);
  await page.getByRole('button', { name: 'Send me a link' }).click();
  await page.getByText('If the e-mail address is registered').waitFor();
  await o.mailsSent();
  const link = await mailedLink(o.mailDir, o.email);
  assert.ok(link.startsWith(`${o.base}/portal/#refresh=`), link);
  const started = Date.now();
  await page.goto(link);
  await page.getByRole('heading', { name: 'Endpoint', level: 1 }).waitFor();
  return Date.now() - started;
}

/**
 * The built portal's size: its assets as they are, and index.html with them gzipped at level 9 (as a server may send
 * them).
 */
export function bundleSize(dist: string) {
  const assets = readdirSync(join(dist, 'assets')).map((f) => join(dist, 'assets', f));
  const gzipped = [join(dist, 'index.html'), ...assets].reduce(
    (sum, f) => sum + gzipSync(readFileSync(f), { level: 9 }).length,
    0,
  );
  return { raw: assets.reduce((sum, f) => sum + statSync(f).size, 0), gzipped };
}

/**
 * What the page asks of the service from now on, and what became of each request (its timing when it finished), with
 * the browser's online and offline events (until the page is loaded again), as lines: read when something the page
 * should show does not come, to tell a request never sent, one unanswered and one answered but not shown apart.
 */
export async function watchRequests(page: Page): Promise<{ lines: () => Promise<string[]>; stop: () => void }> {
  const started = Date.now();
  const lines: string[] = [];
  const at = () => `${String(Date.now() - started).padStart(6)} ms`;
  const path = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');
  const asked = (r: Request) => lines.push(`${at()} asked     ${r.method()} ${path(r.url())}`);
  const answered = (r: Request) => {
    const { requestStart: sent, responseStart: first, responseEnd: end } = r.timing();
    lines.push(`${at()} answered  ${path(r.url())} (sent +${sent}, first byte +${first}, end +${end})`);
  };
  const failed = (r: Request) => lines.push(`${at()} failed    ${path(r.url())}: ${r.failure()?.errorText}`);
  const logged = (m: ConsoleMessage) => lines.push(`${at()} console   ${m.type()}: ${m.text()}`);
  page.on('request', asked);
  page.on('requestfinished', answered);
  page.on('requestfailed', failed);
  page.on('console', logged);
  await page.evaluate(() => {
    for (const name of ['online', 'offline']) addEventListener(name, () => console.log(`the browser said ${name}`));
  });
  return {
    lines: async () => {
      const online = await page.evaluate(() => navigator.onLine).catch((error: Error) => `unread (${error.message})`);
      return [...lines, `${at()} navigator.onLine: ${online}`];
    },
    stop: () => {
      page.off('request', asked);
      page.off('requestfinished', answered);
      page.off('requestfailed', failed);
      page.off('console', logged);
    },
  };
}

/**
 * Where the events list stands (`of`: its address and first event's short id, null when it shows none), and a wait
 * until it stands there again (`shows`). Its whole text is not compared: an event written meanwhile may have joined the
 * page's end. A timeout says what the page shows.
 */
export const eventsPage = {
  of: async (page: Page) => ({
    url: page.url(),
    first: await page.evaluate(() => document.querySelector('ul.events li code')?.textContent ?? null),
  }),
  shows: (page: Page, { url, first }: { url: string; first: string | null }) =>
    page
      .waitForFunction(
        ([expectedUrl, expectedFirst]) =>
          location.href === expectedUrl &&
          (document.querySelector('ul.events li code')?.textContent ?? null) === expectedFirst &&
          (expectedFirst !== null || document.querySelector('main')?.textContent?.includes('No newer events yet')),
        [url, first] as const,
      )
      .catch(async (error: Error) => {
        throw new Error(`${error.message}; at ${page.url()} the page shows: ${await page.locator('main').innerText()}`);
      }),
};
