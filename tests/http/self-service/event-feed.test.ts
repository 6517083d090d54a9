import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { integrator } from '../../support/integrators.ts';
import { onPostgres, skipUnless } from '../../support/skip.ts';
import { app, configure, createJob, get, type Json, setStatus, withSelfServiceApp } from './support.ts';

// The event feed (GET /v3/events): every event of the caller's endpoint, oldest first, page by page from a cursor.
const test = suite('integrator self-service: event feed');
withSelfServiceApp(test);

/**
 * Follows `next` from the start until a page comes back empty: every event of the caller's feed. A feed that does
 * not move on fails the test instead of running forever: a page with events must name a cursor not seen before, and
 * the feeds drained here end within `maxPages`.
 */
async function drain(token: string, limit = 3, maxPages = 50) {
  const items: Json[] = [];
  const cursors = new Set<string>();
  let after: string | null = null;
  for (let page = 1; ; page++) {
    assert.ok(
      page <= maxPages,
      `the feed did not end within ${maxPages} pages of ${limit} (${items.length} events read)`,
    );
    const res = await get(`/v3/events?limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`, token);
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.ok(res.body.items.length <= limit);
    items.push(...res.body.items);
    if (res.body.items.length === 0) return { items, next: res.body.next as string | null };
    const next = res.body.next as string | null;
    assert.ok(next, `page ${page} has events but no cursor to go on from`);
    assert.not.ok(cursors.has(next), `page ${page} repeats the cursor ${next}: the feed does not move on`);
    cursors.add(next);
    after = next;
  }
}

test("the feed: every event of the caller's endpoint, oldest first, exactly as stored; nobody else's", async () => {
  const brand = await integrator(app, 'brand');
  const other = await integrator(app, 'brand');
  await configure(brand.accountId, 'brand', null);
  await configure(other.accountId, 'brand', null);
  const first = await createJob(brand.accountId);
  const second = await createJob(brand.accountId);
  await setStatus(first, 'open');
  await setStatus(second, 'cancelled');
  await createJob(other.accountId);

  const { items, next } = await drain(brand.accessToken, 2);
  const stored = (await app.services.unitOfWork().statements((d) => d.events.recentFor(brand.accountId, 50))).reverse();
  assert.equal(
    items,
    stored.map((e) => e.payload),
    'the payloads as stored, in order',
  );
  assert.equal(
    items.map((e) => [e.orderId, e.status]),
    [
      [first, 'new'],
      [second, 'new'],
      [first, 'open'],
      [second, 'cancelled'],
    ],
  );
  assert.ok(next, 'an empty page still says where to go on from');

  await setStatus(first, 'accepted');
  // An event is served once it has its position: the read positions what committed before it, unless a sequencer of
  // another process is at it just then (the suites share the database), which positions it within its round.
  let more = await get(`/v3/events?after=${encodeURIComponent(next!)}`, brand.accessToken);
  for (let i = 0; i < 50 && more.body.items.length === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    more = await get(`/v3/events?after=${encodeURIComponent(next!)}`, brand.accessToken);
  }
  assert.equal(
    more.body.items.map((e: Json) => [e.orderId, e.status]),
    [[first, 'accepted']],
    'only what came after the cursor',
  );
  assert.equal((await drain(other.accessToken)).items.map((e) => e.orderId).includes(first), false);
});

test('a page is the stored texts byte for byte, characters past ASCII too, in UTF-8 with its length', async () => {
  const brand = await integrator(app, 'brand');
  await configure(brand.accountId, 'brand', null);
  const apiId = (
    await app.admin.call<{ apiId: string }>('jobs.create', {
      brandAccountId: brand.accountId,
      name: 'Hauptstraße 5 — Müller 🚀',
    })
  ).apiId;
  await setStatus(apiId, 'open');
  const res = await get('/v3/events?limit=10', brand.accessToken);
  assert.is(res.status, 200);
  assert.is(res.headers['content-type'], 'application/json; charset=utf-8');
  const stored = (await app.services.unitOfWork().statements((d) => d.events.recentFor(brand.accountId, 50))).reverse();
  assert.is(stored.length, 2);
  assert.ok(res.text.includes('Hauptstraße 5 — Müller 🚀'), res.text.slice(0, 300));
  assert.is(
    res.text,
    `{"items":[${stored.map((e) => JSON.stringify(e.payload)).join(',')}],"next":${JSON.stringify(res.body.next)}}`,
  );
  assert.is(Number(res.headers['content-length']), Buffer.byteLength(res.text));
});

test("a child partner without a configuration reads its master's feed; no endpoint is 403 (partner) or 404 (brand)", async () => {
  const brand = await integrator(app, 'brand');
  const master = await integrator(app, 'partner');
  const child = await integrator(app, 'partner', master.accountId);
  const loner = await integrator(app, 'partner');
  await configure(master.accountId, 'partner', null);
  const apiId = await createJob(brand.accountId, child.accountId);
  await setStatus(apiId, 'accepted');
  const ofMaster = (await drain(master.accessToken)).items;
  const ofChild = (await drain(child.accessToken)).items;
  assert.equal(ofChild, ofMaster);
  assert.equal(
    ofChild.map((e) => [e.jobApiId, e.status]),
    [
      [apiId, 'new'],
      [apiId, 'accepted'],
    ],
  );
  assert.is((await get('/v3/events', loner.accessToken)).status, 403);
  const none = await get('/v3/events', brand.accessToken);
  assert.is(none.status, 404);
  assert.match(none.body.detail, /PUT \/v3\/webhook-config/);
});

test('a read during another round waits for it, then sees the event committed before it asked', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL): a round held by another connection')) return;
  const brand = await integrator(app, 'brand');
  await configure(brand.accountId, 'brand', null);
  const first = await createJob(brand.accountId);
  assert.is((await drain(brand.accessToken)).items.length, 1);
  // A round under way elsewhere (its snapshot taken before the next event commits): the sequencer's lock, held.
  const round = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await round.connect();
  try {
    await round.query('begin');
    await round.query("select pg_advisory_xact_lock(x'70626931'::int)");
    const second = await createJob(brand.accountId);
    const read = get('/v3/events?limit=10', brand.accessToken);
    setTimeout(() => void round.query('commit'), 300);
    const res = await read;
    assert.equal(
      res.body.items.map((e: Json) => e.orderId),
      [first, second],
      'the event committed before the read, positioned after the round it waited for',
    );
  } finally {
    await round.end();
  }
});

test('limit and cursor are checked: out of bounds or foreign is 400, never 500', async () => {
  const brand = await integrator(app, 'brand');
  await configure(brand.accountId, 'brand', null);
  for (const query of [
    'limit=0',
    'limit=501',
    'limit=abc',
    'after=not-a-cursor',
    `after=${Buffer.from('[1]').toString('base64url')}`,
  ]) {
    const res = await get(`/v3/events?${query}`, brand.accessToken);
    assert.is(res.status, 400, query);
    assert.is(res.body.code, 'BAD_REQUEST');
  }
  assert.is((await get('/v3/events?limit=500', brand.accessToken)).status, 200);
  assert.is((await app.http.get('/v3/events')).status, 401);
});

test.run();
