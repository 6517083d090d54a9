import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type Account,
  accountsOf,
  app,
  get,
  hierarchy,
  hooks,
  ids,
  type Json,
  type Kind,
  post,
  RUNS,
  replay,
  sleep,
  sql,
  withIsolationApp,
} from './support.ts';

// The delivery log, the feed and replay (CONTRACT §10).
const test = suite('tenant isolation of the delivery log, the feed and replay');
withIsolationApp(test);

const deliveryWorld = fc.record({
  world: hierarchy(fc.constantFrom<Kind>('none', 'quiet', 'ok', 'fail', 'fail')),
  jobs: fc.array(fc.record({ brand: fc.nat(1), partner: fc.option(fc.nat(5), { nil: null }), change: fc.boolean() }), {
    minLength: 2,
    maxLength: 5,
  }),
  pageSize: fc.integer({ min: 1, max: 4 }),
  replayer: fc.nat(),
  redeliverer: fc.nat(),
});

interface DeliveryRow {
  id: string;
  account_id: string;
  status: string;
  attempts: number;
}

test("delivery log, feed and replay: each account sees and replays exactly its endpoint's; another's is 404 and nothing changes", async () => {
  await fc.assert(
    fc.asyncProperty(deliveryWorld, async (w) => {
      const since = new Date(Date.now() - 1000).toISOString();
      const accounts = await accountsOf(w.world);
      const brands = accounts.filter((a) => a.role === 'brand');
      const partners = accounts.filter((a) => a.role === 'partner');
      const byId = new Map(accounts.map((a) => [a.id, a]));
      for (const j of w.jobs) {
        const partner = j.partner === null ? null : partners[j.partner % partners.length]!;
        const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', {
          brandAccountId: brands[j.brand % brands.length]!.id,
          partnerId: partner?.id ?? null,
          status: 'accepted',
        });
        if (j.change) await app.admin.call('jobs.setStatus', { apiId, status: 'started' });
      }

      // The oracle (CONTRACT §10): whose endpoint an account's events and deliveries belong to.
      const ownerOf = (a: Account): Account | null =>
        a.kind !== 'none'
          ? a
          : a.role === 'partner' && a.parent && byId.get(a.parent)!.kind !== 'none'
            ? byId.get(a.parent)!
            : null;
      const deliveries = async () =>
        sql<DeliveryRow>(
          `select id::text, account_id::text, status, attempts from deliveries where account_id = any(string_to_array(?, ',')::uuid[]) order by id`,
          [ids(accounts)],
        );
      /** Every delivery of the world, whole, with its tries: equal means nothing changed and no row appeared. */
      const fingerprint = async (except: (d: DeliveryRow) => boolean = () => false) =>
        (
          await sql<DeliveryRow & { r: string }>(
            `select d.id::text, d.account_id::text, d.status, d.attempts, (to_jsonb(d) - 'lease_until' - 'claim_token')::text
         || (select count(*)::text || coalesce(max(a.at)::text, '') from delivery_attempts a where a.delivery_id = d.id) as r
       from deliveries d where d.account_id = any(string_to_array(?, ',')::uuid[]) order by d.id`,
            [ids(accounts)],
          )
        )
          .filter((d) => !except(d))
          .map((d) => d.r);
      async function settled() {
        for (const deadline = Date.now() + 15_000; ; ) {
          const rows = await deliveries();
          if (rows.every((d) => d.status !== 'pending')) return rows;
          if (Date.now() > deadline)
            throw new Error(`deliveries still pending: ${rows.filter((d) => d.status === 'pending').length}`);
          await sleep(25);
        }
      }

      let rows = await settled();
      for (const d of rows)
        assert.ok(
          ['ok', 'fail'].includes(ownerOf(byId.get(d.account_id)!)?.kind ?? 'none'),
          'a delivery only to an endpoint with a URL',
        );
      const events = await sql<{ id: string; account_id: string }>(
        `select id::text, account_id::text from events where account_id = any(string_to_array(?, ',')::uuid[])`,
        [ids(accounts)],
      );
      const sameEndpoint = (x: Account) => (d: { account_id: string }) =>
        ownerOf(byId.get(d.account_id)!) === ownerOf(x);
      const before = await fingerprint();

      for (const x of accounts) {
        const owner = ownerOf(x);
        const refused = x.role === 'partner' ? 403 : 404;
        if (!owner) {
          assert.is((await get('/v3/webhook-deliveries', x)).status, refused, 'no endpoint: no delivery log');
          assert.is((await get('/v3/events', x)).status, refused, 'no endpoint: no feed');
          assert.is((await get('/v3/webhook-deliveries/stats', x)).status, refused, 'no endpoint: no statistics');
          assert.is((await post('/v3/webhook-deliveries/redeliver-failed', x, { since })).status, refused);
          if (rows[0]) assert.is((await post(`/v3/webhook-deliveries/${rows[0].id}/redeliver`, x)).status, refused);
          if (rows[0]) assert.is((await get(`/v3/webhook-deliveries/${rows[0].id}`, x)).status, refused);
          continue;
        }
        const mine = rows.filter(sameEndpoint(x));

        // The log, page by page: exactly the deliveries of the caller's endpoint, newest first, each naming its URL.
        const listed: Json[] = [];
        for (let cursor: string | null = null, pages = 0; ; pages++) {
          const res = await get(
            `/v3/webhook-deliveries?limit=${w.pageSize}${cursor ? `&before=${encodeURIComponent(cursor)}` : ''}`,
            x,
          );
          assert.is(res.status, 200, JSON.stringify(res.body));
          listed.push(...res.body.items);
          cursor = res.body.next;
          if (!cursor) break;
          assert.ok(pages < 100, 'the log ends');
        }
        assert.equal(
          listed.map((d) => d.id).sort(),
          mine.map((d) => d.id).sort(),
          `the log of ${x.role} ${x.id} (endpoint of ${owner.id})`,
        );
        assert.ok(
          listed.every((d) => d.url === hooks.url(`/${owner.kind}/${owner.id}`)),
          "every item at the caller's endpoint",
        );
        for (const status of ['failed', 'delivered'] as const) {
          const res = await get(`/v3/webhook-deliveries?status=${status}&limit=100`, x);
          assert.equal(
            res.body.items.map((d: Json) => d.id).sort(),
            mine
              .filter((d) => d.status === status)
              .map((d) => d.id)
              .sort(),
            `the ${status} log`,
          );
        }
        // The statistics count exactly the tries of the caller's endpoint's deliveries.
        const stats = await get('/v3/webhook-deliveries/stats', x);
        assert.equal(
          [stats.status, stats.body.items.reduce((n: number, b: Json) => n + b.attempts, 0)],
          [200, listed.reduce((n, d) => n + d.attempts.length, 0)],
          `the statistics of ${x.role} ${x.id}`,
        );

        // The feed: exactly the events of the caller's endpoint (positions are given in the background: wait for them).
        const expected = events
          .filter(sameEndpoint(x))
          .map((e) => e.id)
          .sort();
        let fed: string[] = [];
        for (const deadline = Date.now() + 10_000; ; ) {
          const res = await get('/v3/events?limit=500', x);
          assert.is(res.status, 200);
          fed = res.body.items.map((e: Json) => e._eid).sort();
          if (fed.length >= expected.length || Date.now() > deadline) break;
          await sleep(25);
        }
        assert.equal(fed, expected, `the feed of ${x.role} ${x.id}`);

        // One of its own deliveries in full; another endpoint's deliveries (one of each other endpoint) and an unknown
        // id: 404, over REST and typed RPC.
        if (mine[0]) {
          const res = await get(`/v3/webhook-deliveries/${mine[0].id}`, x);
          assert.equal([res.status, res.body.id], [200, mine[0].id], `its own delivery in full (${x.id})`);
        }
        const foreignOwners = new Set<string>();
        for (const d of rows.filter((r) => !sameEndpoint(x)(r))) {
          const of = ownerOf(byId.get(d.account_id)!)!.id;
          if (foreignOwners.has(of)) continue;
          foreignOwners.add(of);
          const res = await post(`/v3/webhook-deliveries/${d.id}/redeliver`, x);
          assert.equal(
            [res.status, res.body.code],
            [404, 'NOT_FOUND'],
            `redeliver of another endpoint's delivery (${x.id} → ${of})`,
          );
          const typed = await app.http
            .post('/trpc/webhookDeliveries.redeliver')
            .set('authorization', `Bearer ${x.token}`)
            .send({ id: d.id });
          assert.is(typed.status, 404, "typed redeliver of another endpoint's delivery");
          const read = await get(`/v3/webhook-deliveries/${d.id}`, x);
          assert.equal(
            [read.status, read.body.code],
            [404, 'NOT_FOUND'],
            `another endpoint's delivery in full (${x.id} → ${of})`,
          );
          const typedRead = await app.http
            .get(`/trpc/webhookDeliveries.get?input=${encodeURIComponent(JSON.stringify({ id: d.id }))}`)
            .set('authorization', `Bearer ${x.token}`);
          assert.is(typedRead.status, 404, "typed read of another endpoint's delivery");
        }
        assert.is((await get(`/v3/webhook-deliveries/${randomUUID()}`, x)).status, 404);
        assert.is((await post(`/v3/webhook-deliveries/${randomUUID()}/redeliver`, x)).status, 404);
      }

      // Admin procedures take account ids: integrator tokens are refused there.
      const [x, y] = [accounts[0]!, accounts.at(-1)!];
      const asX = (req: import('supertest').Test) => req.set('authorization', `Bearer ${x.token}`);
      assert.is(
        (
          await asX(
            app.http.get(
              `/trpc/admin.deliveries.list?input=${encodeURIComponent(JSON.stringify({ accountId: y.id }))}`,
            ),
          )
        ).status,
        401,
      );
      assert.is(
        (await asX(app.http.post('/trpc/admin.deliveries.redeliverFailed')).send({ accountId: y.id, since })).status,
        401,
      );
      if (rows[0])
        assert.is(
          (await asX(app.http.post('/trpc/admin.deliveries.redeliver')).send({ deliveryId: rows[0].id })).status,
          401,
        );
      if (rows[0])
        assert.is(
          (
            await asX(
              app.http.get(
                `/trpc/admin.deliveries.get?input=${encodeURIComponent(JSON.stringify({ deliveryId: rows[0].id }))}`,
              ),
            )
          ).status,
          401,
        );
      // Another endpoint's delivery is not found by its id, and there is no path that reads an event by its id.
      const foreign = rows.find((d) => ownerOf(byId.get(d.account_id)!) !== ownerOf(x));
      const foreignEvent = events.find((e) => ownerOf(byId.get(e.account_id)!) !== ownerOf(x));
      for (const path of [
        foreign && `/v3/webhook-deliveries/${foreign.id}`,
        foreignEvent && `/v3/events/${foreignEvent.id}`,
      ].filter(Boolean)) {
        assert.ok([404, 405].includes((await get(path!, x)).status), `GET ${path}`);
      }

      assert.equal(await fingerprint(), before, 'no delivery changed and none appeared');

      // Replay of every failed delivery: the caller's endpoint's only, counted; the others' stay as they were.
      const withEndpoint = accounts.filter((a) => ownerOf(a));
      if (withEndpoint.length > 0) {
        const replayer = withEndpoint[w.replayer % withEndpoint.length]!;
        const own = sameEndpoint(replayer);
        const failed = rows.filter((d) => own(d) && d.status === 'failed');
        const others = await fingerprint(own);
        const res = await post('/v3/webhook-deliveries/redeliver-failed', replayer, { since });
        assert.equal([res.status, res.body], [202, { count: failed.length }], `redeliver-failed of ${replayer.id}`);
        rows = await settled();
        assert.equal(await fingerprint(own), others, "replay leaves the other endpoints' deliveries alone");
        for (const d of failed)
          assert.ok(rows.find((r) => r.id === d.id)!.attempts > d.attempts, 'the replayed deliveries were tried again');
      }

      // One delivery again, by an account of its endpoint.
      const reachable = accounts.filter((a) => rows.some(sameEndpoint(a)));
      if (reachable.length > 0) {
        const redeliverer = reachable[w.redeliverer % reachable.length]!;
        const own = rows.filter(sameEndpoint(redeliverer));
        const d = own[w.redeliverer % own.length]!;
        const others = await fingerprint((r) => r.id === d.id);
        const res = await post(`/v3/webhook-deliveries/${d.id}/redeliver`, redeliverer);
        assert.equal([res.status, res.body], [202, { id: d.id, status: 'pending' }], "one's own delivery again");
        rows = await settled();
        assert.ok(rows.find((r) => r.id === d.id)!.attempts > d.attempts, 'sent again');
        assert.equal(await fingerprint((r) => r.id === d.id), others, 'nothing else changed');
      }
    }),
    { numRuns: RUNS, includeErrorInReport: true, ...replay },
  );
});

test.run();
