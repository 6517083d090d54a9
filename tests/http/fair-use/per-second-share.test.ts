import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ADMIN_TOKEN } from '../../support/app.ts';
import { appWithMailbox, integrator } from '../../support/integrators.ts';
import {
  type App,
  answeredAtTheDoor,
  app,
  brand,
  freshPartner,
  LIMIT,
  listing,
  partner,
  waitForNextWindow,
  withFairUseApps,
} from './support.ts';

// API_RATE_LIMIT_PER_ACCOUNT (CONTRACT §1): authenticated requests a second per account; beyond, 429 with Retry-After,
// for that account alone, which is paced from then on. What counts, on every face, and what does not.
const test = suite('fair use: requests per account and second');
withFairUseApps(test);

const laneWaiting = (on: App) =>
  on.http
    .get('/metrics')
    .set('authorization', `Bearer ${ADMIN_TOKEN}`)
    .then((r) => Number(/account_lane_waiting_requests (\d+)/.exec(r.text)?.[1] ?? 0));

test('beyond the limit within a second: 429 problem with Retry-After; the next second serves again', async () => {
  await waitForNextWindow();
  const answers = await Promise.all(Array.from({ length: LIMIT + 3 }, () => listing(app, partner.accessToken)));
  const statuses = answers.map((r) => r.status).sort();
  assert.equal(statuses, [...Array(LIMIT).fill(200), ...Array(3).fill(429)]);
  const refused = answers.find((r) => r.status === 429)!;
  assert.is(refused.body.code, 'TOO_MANY_REQUESTS');
  assert.ok(Number(refused.headers['retry-after']) >= 1, `Retry-After: ${refused.headers['retry-after']}`);
  // The legacy listing streams through its own route, and is counted and refused alike.
  const legacy = await app.http.get('/v3/partner-orders').set('authorization', `Bearer ${partner.accessToken}`);
  assert.equal([legacy.status, legacy.body.code], [429, 'TOO_MANY_REQUESTS']);
  assert.ok(Number(legacy.headers['retry-after']) >= 1);
  await waitForNextWindow();
  assert.is((await listing(app, partner.accessToken)).status, 200);
});

test('the typed RPC face and the token endpoint count too, and say when to come back', async () => {
  const partner = await freshPartner();
  await waitForNextWindow();
  const rpc = () =>
    app.http
      .get(`/trpc/partnerOrders.paginated?input=${encodeURIComponent('{}')}`)
      .set('authorization', `Bearer ${partner.accessToken}`);
  const answers = await Promise.all(Array.from({ length: LIMIT + 1 }, rpc));
  const refused = answers.find((r) => r.status === 429);
  assert.ok(refused, `statuses: ${answers.map((r) => r.status).join(' ')}`);
  assert.ok(Number(refused.headers['retry-after']) >= 1, 'Retry-After on /trpc');
  assert.equal([refused.body.error.data.code, refused.body.error.data.reason], ['TOO_MANY_REQUESTS', 'RATE_LIMITED']);
  assert.ok(refused.body.error.data.retryAfter >= 1);
  const minted = await app.http
    .post('/v3/auth/access-token')
    .set('authorization', `Bearer ${partner.refreshToken}`)
    .send({});
  assert.equal(
    [minted.status, minted.body.code],
    [429, 'TOO_MANY_REQUESTS'],
    'the token endpoint is an authenticated request of the account',
  );
});

test('one account over its limit leaves another account served', async () => {
  const partner = await freshPartner();
  await waitForNextWindow();
  await Promise.all(Array.from({ length: LIMIT + 2 }, () => listing(app, partner.accessToken)));
  assert.is((await listing(app, partner.accessToken)).status, 429);
  const other = await app.http.get('/v3/events').set('authorization', `Bearer ${brand.accessToken}`);
  assert.is(other.status, 404, 'the brand is served (it has no configuration: 404, not 429)');
});

test('once past its share an account is paced: its next requests start an interval apart, and those more than a window behind are refused at the door', async () => {
  // A share of 1 a second: one start a second once paced, so that the timings below have a second to spare.
  const slow = await appWithMailbox({ API_RATE_LIMIT_PER_ACCOUNT: '1' });
  const paced = await integrator(slow, 'partner');
  const calm = await integrator(slow, 'partner');
  for (const a of [paced, calm])
    await slow.admin.call('webhookConfigs.upsert', {
      accountId: a.accountId,
      scope: 'partner',
      url: null,
      transformer: 'partner-format',
      version: '1.3.0',
    });
  await waitForNextWindow();
  const first = (await Promise.all([listing(slow, paced.accessToken), listing(slow, paced.accessToken)]))
    .map((r) => r.status)
    .sort();
  assert.equal(first, [200, 429], 'refused once: paced from now on');
  await waitForNextWindow();
  const t0 = performance.now();
  const timed = () =>
    listing(slow, paced.accessToken).then((r) => ({
      status: r.status,
      ms: performance.now() - t0,
      retryAfter: Number(r.headers['retry-after']),
    }));
  const burst = [timed(), timed()]; // booked at 0 and 1000 ms: the second waits for its turn
  const deadline = performance.now() + 5000;
  while ((await laneWaiting(slow)) < 1) {
    assert.ok(performance.now() < deadline, 'the second request never waited for its turn');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.is((await listing(slow, calm.accessToken)).status, 200, 'another account is not held up meanwhile');
  const before = await answeredAtTheDoor(slow);
  const late = await Promise.all([timed(), timed()]);
  assert.equal(
    late.map((a) => a.status),
    [429, 429],
    'its turn more than a window away: refused at once',
  );
  assert.ok(
    late.every((a) => a.retryAfter >= 2),
    `Retry-After until its queue has drained: ${late.map((a) => a.retryAfter).join(', ')}`,
  );
  assert.is((await answeredAtTheDoor(slow)) - before, 2, 'before the request path');
  const [sooner, later] = (await Promise.all(burst)).sort((a, b) => a.ms - b.ms); // whichever of the two came in first
  assert.is(sooner!.status, 200);
  assert.ok(
    later!.ms >= 1000,
    `the second started a second after the first: answered after ${later!.ms.toFixed(0)} ms`,
  );
});

test("a refused token is not counted: bad tokens cannot use up an account's share", async () => {
  await waitForNextWindow();
  for (let i = 0; i < LIMIT * 2; i++) assert.is((await listing(app, 'not-a-token')).status, 401);
  assert.is((await listing(app, partner.accessToken)).status, 200);
});

test("a withdrawn contact's token uses up nobody's share: 401 every time, and its colleague is still served", async () => {
  const leaver = await integrator(app, 'partner');
  const colleague = await app.admin.call<{ id: string }>('contacts.create', {
    accountId: leaver.accountId,
    email: `colleague-${Date.now()}@example.com`,
  });
  const colleagueToken = await app.services
    .unitOfWork()
    .statements((deps) =>
      deps.tokens.issue(
        'access',
        { contactId: colleague.id, accountId: leaver.accountId, role: 'partner' },
        deps.clock.now(),
        3600,
      ),
    );
  await app.admin.call('contacts.setApiAccess', { contactId: leaver.contactId, apiAccess: false });
  await app.admin.call('webhookConfigs.upsert', {
    accountId: leaver.accountId,
    scope: 'partner',
    url: null,
    transformer: 'partner-format',
    version: '1.3.0',
  });
  await waitForNextWindow();
  for (let i = 0; i < LIMIT * 2; i++) assert.is((await listing(app, leaver.accessToken)).status, 401);
  assert.is((await listing(app, colleagueToken)).status, 200, "the account's share is untouched");
});

test.run();
