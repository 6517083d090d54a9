import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { onPostgres, skipUnless } from '../../support/skip.ts';
import {
  type App,
  answeredAtTheDoor,
  app,
  brand,
  freshPartner,
  LIMIT,
  listing,
  twin,
  waitForNextWindow,
  withFairUseApps,
} from './support.ts';

// On PostgreSQL: two app instances (two processes' worth) share the counters, and an account already refused is
// answered at the door.
const test = suite('fair use: on a PostgreSQL server');
withFairUseApps(test);

test('the counters are shared by every process on one PostgreSQL server', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return; // the embedded database serves one process, whose counters are its own
  const partner = await freshPartner();
  await waitForNextWindow();
  const statuses = (
    await Promise.all([
      ...Array.from({ length: 3 }, () => listing(app, partner.accessToken)),
      ...Array.from({ length: 3 }, () => listing(twin, partner.accessToken)),
    ])
  )
    .map((r) => r.status)
    .sort();
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
  assert.equal(
    [refused.status, refused.body.code, refused.body.requestId],
    [429, 'TOO_MANY_REQUESTS', 'fair-use-check-1'],
  );
  assert.is(refused.headers['x-request-id'], 'fair-use-check-1');
  assert.match(refused.headers['content-type'] ?? '', /^application\/problem\+json/);
  assert.ok(Number(refused.headers['retry-after']) >= 1);
  assert.is(await early(), before + 1, 'refused before the request path');
  // Only the operations of the token's own role are answered early; everything else gets its own path's answer.
  const asPartner = (req: ReturnType<App['http']['get']>) => req.set('authorization', `Bearer ${partner.accessToken}`);
  assert.is(
    (await asPartner(app.http.post('/v3/commands')).send({})).status,
    401,
    'a brand operation: the role is wrong',
  );
  assert.is((await asPartner(app.http.get('/v3/no-such-operation'))).status, 404);
  assert.is((await asPartner(app.http.head('/v3/partner-orders/paginated'))).status, 405);
  assert.is((await asPartner(app.http.options('/v3/partner-orders/paginated'))).status, 405);
  assert.is(
    (await asPartner(app.http.post('/v3/auth/login')).send({ email: 'nobody@example.com' })).status,
    200,
    'the login steps take no access token',
  );
  assert.is(
    (await asPartner(app.http.get('/v3/commands/%E0%A4%A'))).status,
    400,
    'a path that does not decode gets its own answer',
  );
  assert.is((await asPartner(app.http.get('/v3/commands/%2e%2e'))).status, 404, 'nor does a dot segment');
  assert.is(await early(), before + 1, 'none of those was answered early');
  const forged = await listing(app, `${partner.accessToken.slice(0, -2)}xx`);
  assert.is(forged.status, 401, "a token that does not verify is not refused early: it is not the account's");
  const other = await app.http.get('/v3/events').set('authorization', `Bearer ${brand.accessToken}`);
  assert.is(other.status, 404, 'another account is served (it has no configuration: 404, not 429)');
});

test.run();
