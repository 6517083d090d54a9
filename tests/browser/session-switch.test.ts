// Issue 34, "whose session is this": a sign-in link never replaces an open session without asking (login CSRF: a tab
// signed in as brand A, given brand B's link, showed brand B silently), the token leaves the address either way, and
// the header says who is signed in.
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { skipUnless } from '../support/skip.ts';
import { type Account, shot, startPortal } from './fixture.ts';
import { assertAccessible, hasChromium, NO_CHROMIUM } from './support.ts';

const test = suite('whose session is this');
let portal: Awaited<ReturnType<typeof startPortal>>;
let brandA: Account;
let brandB: Account;
let page: Page;

const held = () => page.evaluate(() => sessionStorage.getItem('portal.refreshToken'));
const tokenOf = (link: string) => decodeURIComponent(link.split('#refresh=')[1]!);
const identity = async () => page.getByTestId('identity').innerText();
/** The header once GET /v3/me has answered (the ids stand in for the names until then). */
const nameShown = async () => {
  await page.getByTestId('identity-email').waitFor();
  return identity();
};
const question = () => page.getByTestId('switch-question');

test.before(async () => {
  if (!hasChromium) return;
  portal = await startPortal();
  brandA = await portal.account('brand');
  brandB = await portal.account('brand');
  page = await portal.newPage();
});

test.after(async () => {
  if (!hasChromium) return;
  await portal.stop();
});

test("the header names the signed-in account and the contact's e-mail (GET /v3/me), the ids in their tooltips", async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  await portal.signIn(page, brandA.email);
  await page.getByTestId('identity-email').waitFor();
  assert.is(await identity(), `${brandA.name} · brand · ${brandA.email}`);
  assert.is(
    await page.getByTestId('identity').locator('.account').getAttribute('title'),
    `Account ${brandA.accountId}`,
  );
  assert.is(await page.getByTestId('identity-email').getAttribute('title'), `Contact ${brandA.contactId}`);
});

test("another account's link opened in a signed-in tab asks first; staying keeps the session, and the token leaves the address", async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const mine = await held();
  const linkB = await portal.link(brandB.email);
  await page.goto(linkB); // the same page: only the fragment changes
  await question().waitFor();
  assert.match(
    await question().innerText(),
    new RegExp(
      `^You are signed in as brand account ${brandA.name} \\(${brandA.email}\\)\\. Sign in as the account of this link instead\\?$`,
    ),
  );
  assert.match(
    await page.locator('main').innerText(),
    new RegExp(`signs in as brand account ${brandB.name} \\(${brandB.email}\\)`),
  );
  assert.not.match(page.url(), /refresh=/, 'the token left the address');
  assert.is(await held(), mine, 'the session is not replaced while the question is open');
  assert.is(
    await page.getByRole('navigation', { name: 'Pages' }).count(),
    0,
    "neither account's pages behind the question",
  );
  await assertAccessible(page, 'the switch question');
  await shot(page, 'switch-question');

  await page.getByRole('button', { name: `Stay signed in as brand account ${brandA.name}` }).click();
  await page.getByRole('heading', { name: 'Endpoint', level: 1 }).waitFor();
  assert.match(await nameShown(), new RegExp(`^${brandA.name} `));
  assert.is(await held(), mine, 'still signed in as A');
  await page.reload();
  await page.getByRole('heading', { name: 'Endpoint', level: 1 }).waitFor();
  assert.match(await nameShown(), new RegExp(`^${brandA.name} `), 'and after a reload');
  assert.not.match(page.url(), /refresh=/);
});

test("the same link opened as a new page load asks too; consenting switches to the link's account", async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const linkB = await portal.link(brandB.email);
  await page.goto('about:blank');
  await page.goto(linkB); // a load of its own, with the session in this tab's sessionStorage
  await question().waitFor();
  assert.not.match(page.url(), /refresh=/);
  assert.is.not(await held(), tokenOf(linkB));
  await page.getByRole('button', { name: 'Sign in with the link' }).click();
  await page.getByRole('heading', { name: 'Endpoint', level: 1 }).waitFor();
  assert.is(await nameShown(), `${brandB.name} · brand · ${brandB.email}`);
  assert.is(await held(), tokenOf(linkB), "signed in with the link's token");
  await page.getByRole('status').getByText(`Signed in as brand account ${brandB.name} (${brandB.email}).`).waitFor();
});

test('a fresh link of the same contact needs no question; a refused link leaves the session as it was', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const fresh = await portal.link(brandB.email);
  assert.is.not(tokenOf(fresh), await held());
  await page.goto(fresh);
  await page.waitForFunction((token) => sessionStorage.getItem('portal.refreshToken') === token, tokenOf(fresh));
  await page.getByRole('heading', { name: 'Endpoint', level: 1 }).waitFor();
  assert.is(await question().count(), 0);
  assert.match(await nameShown(), new RegExp(`^${brandB.name} `));

  const before = await held();
  await page.goto(`${portal.base}/portal/#refresh=not-a-token`);
  await page
    .getByRole('alert')
    .getByText(/The sign-in link you opened was refused/)
    .waitFor();
  assert.match(
    await page.getByRole('alert').innerText(),
    new RegExp(`still signed in as brand account ${brandB.name} \\(${brandB.email}\\)`),
  );
  assert.is(await held(), before);
  assert.not.match(page.url(), /refresh=/);
});

test('a link opened in a new tab of a browser that did not ask for it: a question naming the account, Cancel signs nobody in', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const sent = await portal.link(brandB.email); // asked for elsewhere: by someone else, or by the person on another device
  const tab = await portal.newPage();
  await tab.goto(sent);
  await tab.getByTestId('confirm-question').waitFor();
  assert.match(
    await tab.getByTestId('confirm-question').innerText(),
    new RegExp(`signs in as brand account ${brandB.name} \\(${brandB.email}\\)`),
  );
  assert.is(
    await tab.evaluate(() => sessionStorage.getItem('portal.refreshToken')),
    null,
    'no session before the answer',
  );
  assert.not.match(tab.url(), /refresh=/);
  await assertAccessible(tab, 'the question before signing in with a link not asked for here');
  await tab.getByRole('button', { name: 'Cancel' }).click();
  await tab.getByRole('heading', { name: 'Sign in to the integrator portal' }).waitFor();
  assert.is(await tab.evaluate(() => sessionStorage.getItem('portal.refreshToken')), null);

  await tab.goto(sent);
  await tab.getByRole('button', { name: `Sign in as ${brandB.name}` }).click();
  await tab.getByRole('heading', { name: 'Endpoint', level: 1 }).waitFor();
  assert.is(await tab.evaluate(() => sessionStorage.getItem('portal.refreshToken')), tokenOf(sent));
  await tab.context().close();
});

test("a failure mail's link opened signed out: the sign-in link, opened in another tab, leads to that page, filters and all", async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const mailTab = await portal.newPage();
  await mailTab.goto(`${portal.base}/portal/#/deliveries?status=failed`);
  await mailTab.getByLabel('E-mail address').fill(brandA.email);
  await mailTab.getByRole('button', { name: 'Send me a link' }).click();
  await mailTab.getByText('If the e-mail address is registered').waitFor();
  // The mail client opens the sign-in link in a tab of its own (its own sessionStorage), in the same browser.
  const linkTab = await mailTab.context().newPage();
  await linkTab.goto(await portal.link(brandA.email));
  await linkTab.getByRole('heading', { name: 'Deliveries', level: 1 }).waitFor();
  assert.match(linkTab.url(), /#\/deliveries\?status=failed$/);
  assert.is(await linkTab.getByLabel('Status').inputValue(), 'failed');

  // Once only: the next sign-in link leads to the Endpoint page, as without a page asked for; and the address asked
  // for is forgotten once its link has signed in, so that this one (not asked for in this browser) is confirmed first.
  assert.is(await linkTab.evaluate(() => localStorage.getItem('portal.linksAskedFor')), null);
  const again = await mailTab.context().newPage();
  await again.goto(await portal.link(brandA.email));
  await again.getByRole('button', { name: `Sign in as ${brandA.name}` }).click();
  await again.getByRole('heading', { name: 'Endpoint', level: 1 }).waitFor();
  await mailTab.context().close();
});

test.run();
