// Issue 34: one delivery's attempts as a compact timeline, newest first (time, status, duration, the schedule's next
// step), each unfolding to its request and response; a redelivery's "queued" gives way to the state it ends in, with
// no click on Refresh.
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { skipUnless } from '../support/skip.ts';
import { startPortal } from './fixture.ts';
import { assertAccessible, hasChromium, NO_CHROMIUM } from './support.ts';

const test = suite("one delivery's timeline");
let portal: Awaited<ReturnType<typeof startPortal>>;
let page: Page;
let token = '';
type Listed = { id: string; status: string; attempts: { at: string }[]; nextAttemptAt: string | null };

const deliveries = async () =>
  (await portal.app.http.get('/v3/webhook-deliveries').set('authorization', `Bearer ${token}`)).body.items as Listed[];

test.before(async () => {
  if (!hasChromium) return;
  // Three attempts 100 ms apart, then a fourth an hour later: the deliveries wait, pending, with a next attempt due.
  portal = await startPortal({ WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,1h' });
  portal.state.answer = 503;
  const partner = await portal.account('partner', '/timeline-hooks');
  const brand = await portal.account('brand');
  for (let i = 0; i < 2; i++)
    await portal.app.admin.call('jobs.create', { brandAccountId: brand.accountId, partnerId: partner.accountId });
  page = await portal.newPage();
  await portal.signIn(page, partner.email);
  token = await portal.accessTokenOf(page);
  await portal.until(
    async () => (await deliveries()).filter((d) => d.attempts.length === 3).length === 2,
    'two deliveries with three attempts',
  );
});

test.after(async () => {
  if (!hasChromium) return;
  await portal.stop();
});

test("attempts newest first, folded to one line each: time, status, duration and the schedule's next step; one unfolds to its request and response", async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const [delivery] = await deliveries();
  await page.goto(`${portal.base}/portal/#/deliveries/${delivery!.id}`);
  const attempts = page.getByTestId('attempt');
  await attempts.nth(2).waitFor();
  assert.is(await attempts.count(), 3);
  const shown = await attempts.evaluateAll((items) => items.map((li) => li.getAttribute('data-at')!));
  assert.equal(shown, delivery!.attempts.map((a) => a.at).reverse(), 'newest first');
  assert.ok(Date.parse(shown[0]!) > Date.parse(shown[2]!));

  const lines = await attempts.locator('summary').allInnerTexts();
  for (const line of lines)
    assert.match(
      line,
      /^Attempt \d:\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\s+503\s+\d+(\.\d)? m?s\b/,
      `time, status, duration: ${line}`,
    );
  assert.match(
    lines[0]!,
    // An hour after the third attempt: "1 h 00 min" when read within half a second of it (the duration rounds to whole
    // seconds), "59 min …" after, fewer minutes on a loaded machine.
    /^Attempt 3:[\s\S]*next attempt \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC \(in (5[5-9] min|1 h 00 min)/,
    `the next attempt the schedule set, an hour on: ${lines[0]}`,
  );
  assert.match(lines[1]!, /^Attempt 2:[\s\S]*tried again (\d+ ms|\d\.\d s) later/, 'the retry that followed');
  assert.not.match(lines.join('\n'), /HTTP 503/, 'the status is not repeated in the answer');

  // Folded: nothing of the requests shows, and three attempts take a few lines (they took 3,666 px unfolded).
  assert.is(
    await page
      .getByLabel(/^Request of attempt/)
      .filter({ visible: true })
      .count(),
    0,
    'every attempt folded',
  );
  const height = (await page.locator('ol.timeline').boundingBox())!.height;
  assert.ok(height < 250, `the timeline of three attempts is ${height} px tall`);
  await assertAccessible(page, 'one delivery, folded');

  await attempts.nth(2).locator('summary').click();
  await page.getByLabel('Request of attempt 1').waitFor();
  assert.match(await page.getByLabel('Request of attempt 1').innerText(), /webhook-signature|webhook-id/);
  assert.match(await page.getByLabel('Response body of attempt 1').innerText(), /^failure 503/);
  assert.is(await page.getByLabel('Request of attempt 3').isVisible(), false, 'the others stay folded');
  await assertAccessible(page, 'one delivery, an attempt unfolded');
});

test('a redelivery: "queued" until the delivery is delivered, which shows without a click on Refresh', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const [delivery] = await deliveries();
  portal.state.answer = 200;
  await page.goto(`${portal.base}/portal/#/deliveries/${delivery!.id}`);
  await page.getByTestId('attempt').nth(2).waitFor();
  await page.getByRole('button', { name: /^Redeliver / }).click();
  await page.getByTestId('delivery-status').getByText('delivered').waitFor();
  await page.getByText('queued').waitFor({ state: 'detached' });
  assert.is(await page.getByTestId('attempt').count(), 4);
  assert.match(
    await page.getByTestId('attempt').first().locator('summary').innerText(),
    /\s200\s[\s\S]*delivered/,
    'the newest attempt, delivered',
  );
  assert.is((await deliveries()).find((d) => d.id === delivery!.id)!.status, 'delivered');
});

test('the list: a row\'s redelivery turns delivered and drops "queued" on its own', async () => {
  if (skipUnless(hasChromium, NO_CHROMIUM)) return;
  const pending = (await deliveries()).find((d) => d.status === 'pending')!;
  await page.goto(`${portal.base}/portal/#/deliveries`);
  const row = page.locator('tbody tr', { has: page.locator(`a[href="#/deliveries/${pending.id}"]`) });
  await row.waitFor();
  assert.match(
    await row.locator('td[data-label="Next attempt"]').innerText(),
    /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/,
    'when the next attempt is due',
  );
  assert.is(await row.locator('td[data-label="Attempts"]').innerText(), '3');
  await row.getByRole('button', { name: /^Redeliver / }).click();
  await row.locator('.status.delivered').waitFor();
  await row.getByText('queued').waitFor({ state: 'detached' });
  assert.is(await row.locator('td[data-label="Attempts"]').innerText(), '4');
  assert.is(await row.locator('td[data-label="Next attempt"]').innerText(), '—');
});

test.run();
