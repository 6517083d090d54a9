import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { purgeRetainedEvents } from '../../domain/use-cases/purge-retained-events.ts';
import { feedCursor } from '../../server/cursors.ts';
import { appWithMailbox, integrator, refreshTokenFor } from '../support/integrators.ts';

// The feed's horizon is the cursor's own time against EVENT_RETENTION_DAYS on the service's clock. This app runs no
// worker, so no purge runs unless the test runs one: the answer cannot depend on how far a purge has got.
const test = suite("the event feed's retention horizon");
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;

test.before(async () => {
  app = await appWithMailbox({ TEST_CLOCK: '1', EVENT_RETENTION_DAYS: '30' });
});

const get = (path: string, token: string) => app.http.get(path).set('authorization', `Bearer ${token}`);
const createJob = (brandId: string) => app.admin.call('jobs.create', { brandAccountId: brandId });

/** Follows `next` from the start until a page comes back empty. */
async function drain(token: string) {
  const items: unknown[] = [];
  for (let after: string | null = null; ; ) {
    const res = await get(`/v3/events?limit=2${after ? `&after=${encodeURIComponent(after)}` : ''}`, token);
    assert.is(res.status, 200, JSON.stringify(res.body));
    items.push(...res.body.items);
    if (res.body.items.length === 0) return { items, next: res.body.next as string };
    after = res.body.next;
  }
}

test('410 GONE for a cursor older than the retention window, with or without a purge run; a cursor within it is 200', async () => {
  const brand = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: null,
    transformer: 'default',
    version: '1.3.0',
  });
  await createJob(brand.accountId);
  await createJob(brand.accountId);
  const afterFirst = (await get('/v3/events?limit=1', brand.accessToken)).body.next as string;
  const { next: afterAll } = await drain(brand.accessToken);
  assert.is(
    (await get(`/v3/events?after=${encodeURIComponent(afterFirst)}`, brand.accessToken)).status,
    200,
    'within the window',
  );

  await app.admin.call('testClock.advance', { seconds: 31 * 86_400 });
  // The tokens expired too: a contact logs in again.
  await app.admin.call('contacts.create', { accountId: brand.accountId, email: `again-${brand.email}` });
  const refresh = await refreshTokenFor(app, `again-${brand.email}`);
  const access = (await app.http.post('/v3/auth/access-token').set('authorization', `Bearer ${refresh}`).send({})).body
    .access_token as string;
  const isGone = async (cursor: string, what: string) => {
    const gone = await get(`/v3/events?after=${encodeURIComponent(cursor)}`, access);
    assert.equal([gone.status, gone.headers['content-type']?.split(';')[0]], [410, 'application/problem+json'], what);
    assert.equal([gone.body.code, gone.body.title, gone.body.status], ['GONE', 'Gone', 410], what);
    assert.match(gone.body.detail, /30 days/, what);
  };
  const stored = () => app.services.unitOfWork().statements((d) => d.events.recentFor(brand.accountId, 10));
  assert.is((await stored()).length, 2, 'nothing purged yet');
  await isGone(afterFirst, 'an old cursor, before any purge');
  await isGone(afterAll, 'the old cursor of a feed where nothing new came, before any purge');
  const typed = await app.http
    .get(`/trpc/events.feed?input=${encodeURIComponent(JSON.stringify({ after: afterFirst }))}`)
    .set('authorization', `Bearer ${access}`);
  assert.equal(
    [typed.status, typed.body.error.data.code, typed.body.error.data.reason],
    [404, 'NOT_FOUND', 'GONE'],
    'typed clients can tell it apart',
  );

  while ((await app.services.unitOfWork().statements((d) => purgeRetainedEvents(d, 30, 1000))) === 1000);
  assert.is((await stored()).length, 0, 'purged');
  await isGone(afterFirst, 'an old cursor, after the purge');
  await isGone(afterAll, 'the old cursor of a quiet feed, after the purge');

  await createJob(brand.accountId);
  const { items, next: recent } = await drain(access);
  assert.is(items.length, 1, 'the new event, where a reader starts again');
  const still = await get(`/v3/events?after=${encodeURIComponent(recent)}`, access);
  assert.equal([still.status, still.body.items], [200, []], 'a cursor within the window goes on');
});

test("a purge deleting several of an endpoint's events at once: a cursor before the last of them is 410 while within the window", async () => {
  const brand = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: null,
    transformer: 'default',
    version: '1.3.0',
  });
  for (let i = 0; i < 3; i++) await createJob(brand.accountId);
  const afterFirst = (await get('/v3/events?limit=1', brand.accessToken)).body.next as string;
  const endpointId = (await app.services
    .unitOfWork()
    .statements((d) => d.webhookConfigs.find(brand.accountId, 'brand')))!.id;
  const feedRead = (orderId?: string) =>
    app.services.unitOfWork().statements((d) => d.eventFeed.page(endpointId, 0, 10, orderId));
  assert.equal(
    [(await feedRead()).entries.length, (await feedRead()).purgedThrough],
    [3, 0],
    'no horizon yet: 0 beside the page',
  );
  const afterSecond = (await get(`/v3/events?limit=1&after=${encodeURIComponent(afterFirst)}`, brand.accessToken)).body
    .next as string;
  const { items, next: afterAll } = await drain(brand.accessToken);
  assert.is(items.length, 3);

  // A purge that runs ahead of this app's 30 days (another process's clock or EVENT_RETENTION_DAYS: a day ahead here,
  // as a purge takes whole days) deletes the three at once (their day, or a batch larger than everything stored),
  // while the cursors are minutes old. The worker's rounds follow one another while each finds work.
  while ((await app.services.unitOfWork().statements((d) => purgeRetainedEvents(d, -1, 1_000_000))) === 1_000_000);
  assert.is(
    (await app.services.unitOfWork().statements((d) => d.events.recentFor(brand.accountId, 10))).length,
    0,
    'purged',
  );
  const horizon = feedCursor.parse(afterAll).position;
  assert.equal((await feedRead()).purgedThrough, horizon, 'the horizon is the position of the last event purged');
  for (const [cursor, what] of [
    [afterFirst, 'after the first'],
    [afterSecond, 'after the second'],
  ]) {
    const gone = await get(`/v3/events?after=${encodeURIComponent(cursor!)}`, brand.accessToken);
    assert.equal([gone.status, gone.body.code], [410, 'GONE'], `the cursor ${what}: events after it were purged`);
  }
  const last = await get(`/v3/events?after=${encodeURIComponent(afterAll)}`, brand.accessToken);
  assert.equal([last.status, last.body.items], [200, []], 'the cursor after the last: nothing after it was purged');
  const { apiId: orderId } = await app.admin.call<{ apiId: string }>('jobs.create', {
    brandAccountId: brand.accountId,
  });
  await drain(brand.accessToken); // positioned
  const [all, one] = [await feedRead(), await feedRead(orderId)];
  assert.equal(
    [all.entries.length, all.purgedThrough, one.entries.length, one.purgedThrough],
    [1, horizon, 1, horizon],
    "the horizon beside a page of events, and beside one order's page",
  );
});

test.run();
