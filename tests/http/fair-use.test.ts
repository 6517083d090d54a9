import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ADMIN_TOKEN } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// API_RATE_LIMIT_PER_ACCOUNT (CONTRACT §1): authenticated requests a second per account; beyond, 429 with Retry-After,
// for that account alone. On PostgreSQL two app instances (two processes' worth) share the counters.
const test = suite('fair use: requests per account and second');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;
let twin: App;
let partner: Awaited<ReturnType<typeof integrator>>;
let brand: Awaited<ReturnType<typeof integrator>>;
const LIMIT = 5;

test.before(async () => {
  app = await appWithMailbox({ API_RATE_LIMIT_PER_ACCOUNT: String(LIMIT) });
  twin = await appWithMailbox({ API_RATE_LIMIT_PER_ACCOUNT: String(LIMIT) });
  partner = await integrator(app, 'partner');
  brand = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', { accountId: partner.accountId, scope: 'partner', url: null, transformer: 'partner-format', version: '1.3.0' });
});

/**
 * A partner of its own: an account refused for its share is paced for a few seconds after (server/fair-use/lanes.ts),
 * so a test of the window's own count starts from an account never refused.
 */
async function freshPartner() {
  const fresh = await integrator(app, 'partner');
  await app.admin.call('webhookConfigs.upsert', { accountId: fresh.accountId, scope: 'partner', url: null, transformer: 'partner-format', version: '1.3.0' });
  return fresh;
}
const listing = (on: App, token: string) => on.http.get('/v3/partner-orders/paginated').set('authorization', `Bearer ${token}`);
/** 429s answered by the fair-use door, before the request path (metric route "fair use"). */
const answeredAtTheDoor = (on: App) => on.http.get('/metrics').set('authorization', `Bearer ${ADMIN_TOKEN}`)
  .then((r) => Number(/http_requests_total\{method="GET",route="fair use",status="429"\} (\d+)/.exec(r.text)?.[1] ?? 0));
const laneWaiting = (on: App) => on.http.get('/metrics').set('authorization', `Bearer ${ADMIN_TOKEN}`)
  .then((r) => Number(/account_lane_waiting_requests (\d+)/.exec(r.text)?.[1] ?? 0));
const waitForNextWindow = () => new Promise((resolve) => setTimeout(resolve, 1100));

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
  const rpc = () => app.http.get(`/trpc/partnerOrders.paginated?input=${encodeURIComponent('{}')}`).set('authorization', `Bearer ${partner.accessToken}`);
  const answers = await Promise.all(Array.from({ length: LIMIT + 1 }, rpc));
  const refused = answers.find((r) => r.status === 429);
  assert.ok(refused, `statuses: ${answers.map((r) => r.status).join(' ')}`);
  assert.ok(Number(refused.headers['retry-after']) >= 1, 'Retry-After on /trpc');
  assert.equal([refused.body.error.data.code, refused.body.error.data.reason], ['TOO_MANY_REQUESTS', 'RATE_LIMITED']);
  assert.ok(refused.body.error.data.retryAfter >= 1);
  const minted = await app.http.post('/v3/auth/access-token').set('authorization', `Bearer ${partner.refreshToken}`).send({});
  assert.equal([minted.status, minted.body.code], [429, 'TOO_MANY_REQUESTS'], 'the token endpoint is an authenticated request of the account');
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
  for (const a of [paced, calm]) await slow.admin.call('webhookConfigs.upsert', { accountId: a.accountId, scope: 'partner', url: null, transformer: 'partner-format', version: '1.3.0' });
  await waitForNextWindow();
  const first = (await Promise.all([listing(slow, paced.accessToken), listing(slow, paced.accessToken)])).map((r) => r.status).sort();
  assert.equal(first, [200, 429], 'refused once: paced from now on');
  await waitForNextWindow();
  const t0 = performance.now();
  const timed = () => listing(slow, paced.accessToken).then((r) => ({ status: r.status, ms: performance.now() - t0, retryAfter: Number(r.headers['retry-after']) }));
  const burst = [timed(), timed()]; // booked at 0 and 1000 ms: the second waits for its turn
  const deadline = performance.now() + 5000;
  while ((await laneWaiting(slow)) < 1) {
    assert.ok(performance.now() < deadline, 'the second request never waited for its turn');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.is((await listing(slow, calm.accessToken)).status, 200, 'another account is not held up meanwhile');
  const before = await answeredAtTheDoor(slow);
  const late = await Promise.all([timed(), timed()]);
  assert.equal(late.map((a) => a.status), [429, 429], 'its turn more than a window away: refused at once');
  assert.ok(late.every((a) => a.retryAfter >= 2), `Retry-After until its queue has drained: ${late.map((a) => a.retryAfter).join(', ')}`);
  assert.is((await answeredAtTheDoor(slow)) - before, 2, 'before the request path');
  const [sooner, later] = (await Promise.all(burst)).sort((a, b) => a.ms - b.ms); // whichever of the two came in first
  assert.is(sooner!.status, 200);
  assert.ok(later!.ms >= 1000, `the second started a second after the first: answered after ${later!.ms.toFixed(0)} ms`);
});

test('a refused token is not counted: bad tokens cannot use up an account\'s share', async () => {
  await waitForNextWindow();
  for (let i = 0; i < LIMIT * 2; i++) assert.is((await listing(app, 'not-a-token')).status, 401);
  assert.is((await listing(app, partner.accessToken)).status, 200);
});

test('a withdrawn contact\'s token uses up nobody\'s share: 401 every time, and its colleague is still served', async () => {
  const leaver = await integrator(app, 'partner');
  const colleague = await app.admin.call<{ id: string }>('contacts.create', { accountId: leaver.accountId, email: `colleague-${Date.now()}@example.com` });
  const colleagueToken = await app.services.unitOfWork().statements((deps) => deps.tokens.issue('access', { contactId: colleague.id, accountId: leaver.accountId, role: 'partner' }, deps.clock.now(), 3600));
  await app.admin.call('contacts.setApiAccess', { contactId: leaver.contactId, apiAccess: false });
  await app.admin.call('webhookConfigs.upsert', { accountId: leaver.accountId, scope: 'partner', url: null, transformer: 'partner-format', version: '1.3.0' });
  await waitForNextWindow();
  for (let i = 0; i < LIMIT * 2; i++) assert.is((await listing(app, leaver.accessToken)).status, 401);
  assert.is((await listing(app, colleagueToken)).status, 200, 'the account\'s share is untouched');
});

test('at most 2 legacy listings of an account stream at once: a third is 429 with Retry-After; a finished one frees its slot', async () => {
  await waitForNextWindow();
  const legacy = (on: App) => on.http.get('/v3/partner-orders').set('authorization', `Bearer ${partner.accessToken}`);
  for (let i = 0; i < 3; i++) { const res = await legacy(app); assert.is(res.status, 200, 'each listing gives its slot back when it ends'); }
  const held = [await app.services.unitOfWork().statements((deps) => deps.streamSlots.take(partner.accountId)), await twin.services.unitOfWork().statements((deps) => deps.streamSlots.take(partner.accountId))];
  try {
    if (onPostgres) {
      // One slot held here and one by the other instance: the server's count is what counts.
      const refused = await legacy(app);
      assert.equal([refused.status, refused.body.code], [429, 'TOO_MANY_REQUESTS']);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
    } else {
      const third = await app.services.unitOfWork().statements((deps) => deps.streamSlots.take(partner.accountId));
      held.push(third);
      const refused = await legacy(app);
      assert.equal([refused.status, refused.body.code], [429, 'TOO_MANY_REQUESTS']);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
    }
    await waitForNextWindow(); // this test's requests stay within the per-second limit
    assert.is((await app.http.get('/v3/partner-orders/paginated').set('authorization', `Bearer ${partner.accessToken}`)).status, 200, 'the paginated listing is not a stream');
  } finally {
    for (const slot of held) await slot?.release();
  }
  assert.is((await legacy(app)).status, 200);
});

test('the counters are shared by every process on one PostgreSQL server', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return; // the embedded database serves one process, whose counters are its own
  const partner = await freshPartner();
  await waitForNextWindow();
  const statuses = (await Promise.all([
    ...Array.from({ length: 3 }, () => listing(app, partner.accessToken)),
    ...Array.from({ length: 3 }, () => listing(twin, partner.accessToken)),
  ])).map((r) => r.status).sort();
  assert.equal(statuses, [...Array(LIMIT).fill(200), 429]);
});

test('on a server, an account already refused is answered before the request path: the same problem, counted as "fair use"', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return; // in memory, the count itself costs nothing: every request takes the usual path
  const partner = await freshPartner();
  await waitForNextWindow();
  await Promise.all(Array.from({ length: LIMIT + 1 }, () => listing(app, partner.accessToken)));
  const early = () => answeredAtTheDoor(app);
  const before = await early();
  const refused = await listing(app, partner.accessToken).set('x-request-id', 'fair-use-check-1');
  assert.equal([refused.status, refused.body.code, refused.body.requestId], [429, 'TOO_MANY_REQUESTS', 'fair-use-check-1']);
  assert.is(refused.headers['x-request-id'], 'fair-use-check-1');
  assert.match(refused.headers['content-type'] ?? '', /^application\/problem\+json/);
  assert.ok(Number(refused.headers['retry-after']) >= 1);
  assert.is(await early(), before + 1, 'refused before the request path');
  // Only the operations of the token's own role are answered early; everything else gets its own path's answer.
  const asPartner = (req: ReturnType<App['http']['get']>) => req.set('authorization', `Bearer ${partner.accessToken}`);
  assert.is((await asPartner(app.http.post('/v3/commands')).send({})).status, 401, 'a brand operation: the role is wrong');
  assert.is((await asPartner(app.http.get('/v3/no-such-operation'))).status, 404);
  assert.is((await asPartner(app.http.head('/v3/partner-orders/paginated'))).status, 405);
  assert.is((await asPartner(app.http.options('/v3/partner-orders/paginated'))).status, 405);
  assert.is((await asPartner(app.http.post('/v3/auth/login')).send({ email: 'nobody@example.com' })).status, 200, 'the login steps take no access token');
  assert.is((await asPartner(app.http.get('/v3/commands/%E0%A4%A'))).status, 400, 'a path that does not decode gets its own answer');
  assert.is((await asPartner(app.http.get('/v3/commands/%2e%2e'))).status, 404, 'nor does a dot segment');
  assert.is(await early(), before + 1, 'none of those was answered early');
  const forged = await listing(app, `${partner.accessToken.slice(0, -2)}xx`);
  assert.is(forged.status, 401, 'a token that does not verify is not refused early: it is not the account\'s');
  const other = await app.http.get('/v3/events').set('authorization', `Bearer ${brand.accessToken}`);
  assert.is(other.status, 404, 'another account is served (it has no configuration: 404, not 429)');
});

test('a slot whose holder died (its lease ran out) is taken over', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return; // in memory, slots die with their process
  await waitForNextWindow();
  const sql = app.database.orm.em.fork().getConnection();
  await sql.execute(`insert into stream_slots (account_id, slot, holder, lease_until) values (?, 0, gen_random_uuid(), now() - interval '1 second'),
    (?, 1, gen_random_uuid(), now() + interval '1 minute')`, [partner.accountId, partner.accountId]);
  try {
    const res = await app.http.get('/v3/partner-orders').set('authorization', `Bearer ${partner.accessToken}`);
    assert.is(res.status, 200, 'slot 0 was free to take over');
    const [row] = await sql.execute<{ n: number }[]>('select count(*)::int as n from stream_slots where account_id = ?', [partner.accountId]);
    assert.is(row!.n, 1, 'the listing released the slot it took over; the live one stays');
    const another = await app.http.get('/v3/partner-orders').set('authorization', `Bearer ${partner.accessToken}`);
    assert.is(another.status, 200, 'one live slot of two: another listing streams');
  } finally {
    await sql.execute('delete from stream_slots where account_id = ?', [partner.accountId]);
  }
});

test.run();
