import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../server/config.ts';
import { ADMIN_TOKEN, uniqueEmail } from '../support/app.ts';
import { appWithMailbox, integrator, refreshTokenFor } from '../support/integrators.ts';
import { startReceiver } from '../support/receiver.ts';

// Endpoint health (CONTRACT §11) under the test clock: days of failure pass in a moment.
const test = suite('endpoint health: failing, warned, disabled, healed');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Json = Record<string, any>;
interface Logged {
  id: string;
  status: string;
  attempts: { at: string; statusCode: number | null }[];
}
let app: App;

test.before(async () => {
  app = await appWithMailbox({
    TEST_CLOCK: '1',
    WEBHOOK_RETRY_SCHEDULE: '1h',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_DISABLE_AFTER: '5d',
    PUBLIC_URL: 'https://api.example.test/',
  });
  app.worker.start();
});
test.after(() => app.worker.stop());

const HOUR = 3600;
/** The portal's Deliveries page filtered to what failed, under PUBLIC_URL (its trailing slash dropped). */
const FAILED_IN_PORTAL = 'https://api.example.test/portal/#/deliveries?status=failed';

test('WEBHOOK_DISABLE_AFTER: 5 days unless set, a duration with a unit up to days, anything else refused by name', () => {
  assert.is(loadConfig({}).webhookDisableAfterMs, 5 * 86_400_000);
  assert.is(loadConfig({ WEBHOOK_DISABLE_AFTER: '36h' }).webhookDisableAfterMs, 36 * 3_600_000);
  assert.throws(
    () => loadConfig({ WEBHOOK_DISABLE_AFTER: 'soon' }),
    /WEBHOOK_DISABLE_AFTER: must be a duration such as 5d/,
  );
  assert.throws(() => loadConfig({ WEBHOOK_DISABLE_AFTER: '0d' }), /WEBHOOK_DISABLE_AFTER/);
});
const advance = (seconds: number) => app.admin.call('testClock.advance', { seconds });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The account's deliveries, oldest first, once `check` holds for them. */
async function deliveriesOnce(accountId: string, check: (log: Logged[]) => boolean, what: string) {
  for (const deadline = Date.now() + 10_000; ; ) {
    const log = (await app.admin.query<{ items: Logged[] }>('deliveries.list', { accountId })).items.reverse();
    if (check(log)) return log;
    if (Date.now() > deadline) throw new Error(`${what}: not within 10 s; the log: ${JSON.stringify(log)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The health mails sent so far to `to`, once there are `count` (mails go out just after the record that decided them).
 * Only to these addresses: on the database the suites share, the clock moved days ahead makes other suites' old pending
 * deliveries due here too, and their endpoints' mails go through this app's mailer.
 */
async function healthMails(count: number, to: readonly string[]) {
  const mails = () => app.mailbox.sent.filter((m) => m.subject.startsWith('Webhook endpoint') && to.includes(m.to));
  for (const deadline = Date.now() + 5000; mails().length < count && Date.now() < deadline; )
    await new Promise((resolve) => setTimeout(resolve, 25));
  // None more a moment later: each notice is mailed once.
  await new Promise((resolve) => setTimeout(resolve, 200));
  return mails();
}

/** An access token valid now: the test clock outruns their hour (and a refresh token's day). */
async function accessToken(email: string) {
  const refresh = await refreshTokenFor(app, email);
  const res = await app.http.post('/v3/auth/access-token').set(bearer(refresh)).send({});
  assert.is(res.status, 200);
  return res.body.access_token as string;
}

/** A gauge's value from GET /metrics, read afresh (the queue gauges are read at most every 2 s). */
async function gauge(series: string) {
  await new Promise((resolve) => setTimeout(resolve, 2100));
  const res = await app.http.get('/metrics').set('authorization', `Bearer ${ADMIN_TOKEN}`);
  const line = res.text.split('\n').find((l) => l.startsWith(`${series} `));
  assert.ok(line, `${series} is reported`);
  return Number(line.slice(series.length + 1));
}

const config = async (email: string) => {
  const res = await app.http.get('/v3/webhook-config').set(bearer(await accessToken(email)));
  assert.is(res.status, 200, JSON.stringify(res.body));
  return res.body as Json;
};

test('failing from the first failed attempt; warned once while it fails; disabled after WEBHOOK_DISABLE_AFTER; healed by PUT and redeliver-failed', async () => {
  let answer = 500;
  const receiver = await startReceiver(() => answer);
  const brand = await integrator(app, 'brand');
  const second = uniqueEmail('second');
  const withoutAccess = uniqueEmail('no-access');
  await app.admin.call('contacts.create', { accountId: brand.accountId, email: second });
  await app.admin.call('contacts.create', { accountId: brand.accountId, email: withoutAccess, apiAccess: false });
  const put = async (body: Json) =>
    app.http
      .put('/v3/webhook-config')
      .set(bearer(await accessToken(brand.email)))
      .send({ url: receiver.url(), transformer: 'default', version: '1.3.0', ...body });
  assert.is((await put({})).status, 200);
  assert.equal(await config(brand.email).then((c) => [c.failingSince, c.disabledReason]), [null, null]);
  const addresses = [brand.email, second, withoutAccess];
  const mailsBefore = (await healthMails(0, addresses)).length;

  // The first attempt answers 500: failing from that attempt on, before the delivery has failed for good; no mail yet.
  await app.admin.call('jobs.create', { brandAccountId: brand.accountId });
  let log = await deliveriesOnce(brand.accountId, ([d]) => d?.attempts.length === 1, 'the first attempt');
  assert.is(log[0]!.status, 'pending');
  assert.is(
    (await config(brand.email)).failingSince,
    log[0]!.attempts[0]!.at,
    'failing since the first failed attempt',
  );
  assert.is((await healthMails(mailsBefore, addresses)).length, mailsBefore);

  // Its retry fails too: the delivery ends failed, and each contact with API access is mailed once.
  await advance(HOUR);
  log = await deliveriesOnce(brand.accountId, ([d]) => d?.status === 'failed', 'the first delivery failed');
  let mails = (await healthMails(mailsBefore + 2, addresses)).slice(mailsBefore);
  assert.equal(
    mails.map((m) => m.to).sort(),
    [brand.email, second].sort(),
    'one mail to each contact with API access, none to the other',
  );
  const failingSince = log[0]!.attempts[0]!.at;
  for (const mail of mails) {
    assert.is(mail.subject, `Webhook endpoint failing: ${receiver.url()}`);
    assert.ok(mail.text.includes(receiver.url()) && mail.text.includes(failingSince), mail.text);
    assert.ok(mail.text.includes('Failed deliveries: 1.'), mail.text);
    assert.ok(mail.text.includes('POST /v3/webhook-deliveries/redeliver-failed'), mail.text);
    assert.ok(mail.text.split('\n').includes(`See what failed: ${FAILED_IN_PORTAL}`), mail.text);
  }

  // A second failed delivery more than a day later, the endpoint failing all along: no mail (one a failing period).
  await advance(25 * HOUR);
  await app.admin.call('jobs.create', { brandAccountId: brand.accountId });
  await deliveriesOnce(brand.accountId, (l) => l[1]?.attempts.length === 1, 'the second delivery tried');
  await advance(HOUR);
  await deliveriesOnce(brand.accountId, (l) => l[1]?.status === 'failed', 'the second delivery failed');
  assert.is(
    (await healthMails(mailsBefore + 3, addresses)).length,
    mailsBefore + 2,
    'no second mail in the same failing period',
  );
  assert.equal(await config(brand.email).then((c) => [c.enabled, c.failingSince]), [true, failingSince]);

  // Five days on, the next failed delivery disables the endpoint and mails again.
  await advance(5 * 24 * HOUR);
  await app.admin.call('jobs.create', { brandAccountId: brand.accountId });
  await deliveriesOnce(brand.accountId, (l) => l[2]?.attempts.length === 1, 'the third delivery tried');
  assert.is((await config(brand.email)).enabled, true, 'a pending retry disables nothing');
  await advance(HOUR);
  await deliveriesOnce(brand.accountId, (l) => l[2]?.status === 'failed', 'the third delivery failed');
  mails = (await healthMails(mailsBefore + 4, addresses)).slice(mailsBefore + 2);
  assert.equal(mails.map((m) => m.to).sort(), [brand.email, second].sort());
  assert.ok(
    mails.every(
      (m) =>
        m.subject === `Webhook endpoint disabled: ${receiver.url()}` &&
        m.text.includes('Failed deliveries: 3.') &&
        m.text.includes('PUT /v3/webhook-config') &&
        m.text.includes(failingSince) &&
        m.text.includes(FAILED_IN_PORTAL),
    ),
    mails[0]!.text,
  );
  assert.equal(await config(brand.email).then((c) => [c.enabled, c.disabledReason, c.failingSince]), [
    false,
    'failing',
    failingSince,
  ]);
  assert.ok((await gauge('webhook_endpoints_disabled{reason="failing"}')) >= 1);

  // Disabled: no delivery is made, and the feed goes on.
  const requests = receiver.received.length;
  const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
  let fed: Json[] = [];
  for (let i = 0; i < 50 && !fed.some((e) => e.orderId === apiId); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    fed = (await app.http.get('/v3/events?limit=500').set(bearer(await accessToken(brand.email)))).body.items;
  }
  assert.ok(
    fed.some((e) => e.orderId === apiId),
    'the feed has the event',
  );
  assert.is((await deliveriesOnce(brand.accountId, () => true, 'the log')).length, 3, 'no delivery for it');
  assert.is(receiver.received.length, requests);

  // PUT enables it again; redeliver-failed sends the backlog; the 2xx leave it healthy.
  answer = 200;
  const enabled = await put({ enabled: true });
  assert.equal([enabled.body.enabled, enabled.body.disabledReason], [true, null]);
  const replay = await app.http
    .post('/v3/webhook-deliveries/redeliver-failed')
    .set(bearer(await accessToken(brand.email)))
    .send({ since: '2020-01-01T00:00:00Z' });
  assert.equal([replay.status, replay.body.count], [202, 3]);
  await deliveriesOnce(
    brand.accountId,
    (l) => l.length === 3 && l.every((d) => d.status === 'delivered'),
    'the backlog delivered',
  );
  assert.equal(await config(brand.email).then((c) => [c.enabled, c.disabledReason, c.failingSince]), [
    true,
    null,
    null,
  ]);
});

test("a 2xx ends the failing state; PUT with enabled false is the integrator's, enabled true or absent clears it", async () => {
  let answer = 503;
  const receiver = await startReceiver(() => answer);
  const brand = await integrator(app, 'brand');
  const put = async (body: Json) =>
    app.http
      .put('/v3/webhook-config')
      .set(bearer(await accessToken(brand.email)))
      .send({ url: receiver.url(), transformer: 'default', version: '1.3.0', ...body });
  await put({});
  await app.admin.call('jobs.create', { brandAccountId: brand.accountId });
  const [first] = await deliveriesOnce(brand.accountId, ([d]) => d?.attempts.length === 1, 'the first attempt');
  assert.is((await config(brand.email)).failingSince, first!.attempts[0]!.at);
  assert.ok((await gauge('webhook_endpoints_failing')) >= 1);
  answer = 200;
  await advance(HOUR);
  await deliveriesOnce(brand.accountId, ([d]) => d?.status === 'delivered', 'the retry delivered');
  assert.is((await config(brand.email)).failingSince, null, 'the 2xx cleared it');

  const off = await put({ enabled: false });
  assert.equal([off.body.enabled, off.body.disabledReason], [false, 'integrator']);
  assert.ok((await gauge('webhook_endpoints_disabled{reason="integrator"}')) >= 1);
  assert.equal([(await put({})).body.enabled, (await config(brand.email)).disabledReason], [true, null]);
});

test('PUT enabling again, with the same URL, an endpoint the integrator disabled while it failed clears failingSince', async () => {
  const receiver = await startReceiver(() => 503);
  const brand = await integrator(app, 'brand');
  const put = async (body: Json) =>
    app.http
      .put('/v3/webhook-config')
      .set(bearer(await accessToken(brand.email)))
      .send({ url: receiver.url(), transformer: 'default', version: '1.3.0', ...body });
  await put({});
  await app.admin.call('jobs.create', { brandAccountId: brand.accountId });
  const [first] = await deliveriesOnce(brand.accountId, ([d]) => d?.attempts.length === 1, 'the first attempt');
  const failingSince = first!.attempts[0]!.at;
  // Its retry is an hour away (WEBHOOK_RETRY_SCHEDULE): no attempt comes between the PUTs to change failingSince.
  const off = await put({ enabled: false });
  assert.equal([off.body.enabled, off.body.failingSince], [false, failingSince], 'disabling keeps it failing');
  assert.equal(await config(brand.email).then((c) => [c.enabled, c.failingSince]), [false, failingSince]);
  const on = await put({ enabled: true });
  assert.equal(
    [on.body.enabled, on.body.disabledReason, on.body.failingSince],
    [true, null, null],
    'the answer to the PUT',
  );
  assert.equal(
    await config(brand.email).then((c) => [c.enabled, c.disabledReason, c.failingSince]),
    [true, null, null],
    'as stored',
  );
});

test.run();
