import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { purgeRetainedEvents } from '../../domain/use-cases/purge-retained-events.ts';
import { appWithMailbox, integrator, refreshTokenFor } from '../support/integrators.ts';

// The history in day partitions (migrations 20261130000000 and 20261130010000), on the shared database: each test
// moves its own service clock to days no other test writes on, and reads only its own account's rows.
const test = suite('the history in time partitions');
type App = Awaited<ReturnType<typeof appWithMailbox>>;

const DAY = 86_400_000;
const dayName = (at: Date) => at.toISOString().slice(0, 10).replaceAll('-', '');
const HISTORY = ['events', 'deliveries', 'delivery_attempts'] as const;
/** A day of its own for each run, `from` days on at least: a long-lived test database keeps other runs' days. */
const farDay = (from: number) => from + Math.floor(Math.random() * 400);

async function setUp(days: number) {
  const app = await appWithMailbox({ TEST_CLOCK: '1', EVENT_RETENTION_DAYS: '30' });
  const sql = <T>(text: string, values: unknown[] = []) =>
    app.database.orm.em.fork().getConnection().execute<T[]>(text, values);
  const advanceSeconds = async (seconds: number) =>
    new Date(((await app.admin.call('testClock.advance', { seconds })) as { now: string }).now);
  const advance = (days: number) => advanceSeconds(days * 86_400);
  /** The worker's retention round, run to its end: days ahead made, days past dropped, the rest purged row by row. */
  const purge = async () => {
    while ((await app.services.unitOfWork().statements((d) => purgeRetainedEvents(d, 30, 1000))) === 1000);
  };
  const partitions = async () =>
    new Set((await sql<{ name: string }>('select name from history_partitions')).map((r) => r.name));
  const now = days > 0 ? await advance(days) : new Date();
  return { app, sql, advance, advanceSeconds, purge, partitions, now };
}

async function brandWithEndpoint(app: App, url: string | null) {
  const brand = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url,
    transformer: 'default',
    version: '1.3.0',
  });
  return brand;
}

const feed = async (app: App, token: string, after?: string) =>
  await app.http
    .get(`/v3/events?limit=500${after ? `&after=${encodeURIComponent(after)}` : ''}`)
    .set('authorization', `Bearer ${token}`);

test('a day lives in partitions made ahead; past retention it is dropped whole once nothing is to send', async () => {
  const { app, sql, advance, advanceSeconds, purge, partitions, now: before } = await setUp(farDay(700));
  await purge();
  const ahead = await partitions();
  assert.not.ok(ahead.has(`events_p${dayName(before)}`), 'never the day under way');
  const now = await advance(1);
  for (const n of [0, 1, 2]) {
    for (const table of HISTORY) {
      assert.ok(ahead.has(`${table}_p${dayName(new Date(now.getTime() + n * DAY))}`), `${table}, ${n} days ahead`);
    }
  }
  // Never attempted (this app runs no worker): its deliveries stay pending.
  const brand = await brandWithEndpoint(app, 'http://127.0.0.1:9/never');
  for (let i = 0; i < 3; i++) await app.admin.call('jobs.create', { brandAccountId: brand.accountId });
  const read = await feed(app, brand.accessToken);
  assert.is(read.body.items.length, 3, 'the feed has them, positioned');
  const places = await sql<{ part: string; n: number }>(
    `select tableoid::regclass::text as part, count(*)::int as n from events where account_id = ? group by 1
     union all select tableoid::regclass::text, count(*)::int from deliveries where account_id = ? group by 1`,
    [brand.accountId, brand.accountId],
  );
  const day = dayName(now);
  assert.equal(
    places.map((p) => [p.part, p.n]),
    [
      [`events_p${day}`, 3],
      [`deliveries_p${day}`, 3],
    ],
    "the day's partitions hold the day's events and deliveries",
  );

  const ofAccount = async (table: string) =>
    (await sql<{ n: number }>(`select count(*)::int as n from ${table} where account_id = ?`, [brand.accountId]))[0]!.n;
  const highest = (
    await sql<{ p: string }>('select max(position)::text as p from events where account_id = ?', [brand.accountId])
  )[0]!.p;
  const [one, ...others] = (
    await sql<{ id: string }>('select id::text as id from deliveries where account_id = ? order by seq', [
      brand.accountId,
    ])
  ).map((r) => r.id);
  /** As after their last tries: finished, out of the sender's queue. */
  const finish = async (ids: string[]) => {
    await sql('delete from delivery_queue where delivery_id = any(?::uuid[])', [`{${ids.join(',')}}`]);
    await sql(`update deliveries set status = 'failed', failed_at = updated_at where id = any(?::uuid[])`, [
      `{${ids.join(',')}}`,
    ]);
  };
  await finish(others);

  // The horizon passes through the day: the day is kept whole for its drop, not purged row by row meanwhile.
  const endOfDay = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  await advanceSeconds(30 * 86_400 + Math.floor((endOfDay - now.getTime()) / 2000));
  await purge();
  assert.equal([await ofAccount('events'), await ofAccount('deliveries')], [3, 3], 'nothing of the day deleted yet');

  await advance(2);
  await purge();
  assert.ok((await partitions()).has(`events_p${day}`), 'a day with a delivery still to send is kept');
  assert.equal(
    [await ofAccount('events'), await ofAccount('deliveries')],
    [1, 1],
    'with that delivery and its event; the finished ones purged row by row, as before partitions',
  );

  await finish([one!]);
  await purge();
  const after = await partitions();
  for (const table of HISTORY) assert.not.ok(after.has(`${table}_p${day}`), `${table}_p${day} dropped`);
  assert.is(await ofAccount('events'), 0, 'its events are gone with it');
  const horizon = await sql<{ position: string }>(
    'select p.position::text as position from event_feed_purged p join webhook_configs w on w.id = p.endpoint_id where w.account_id = ?',
    [brand.accountId],
  );
  assert.equal(
    horizon.map((h) => h.position),
    [highest],
    "the feed's horizon at the highest position gone",
  );
});

test('a day whose event still waits for its feed position is kept past retention, then dropped', async () => {
  const { app, sql, advance, advanceSeconds, purge, partitions } = await setUp(farDay(3000));
  await purge();
  const now = await advance(1);
  const brand = await brandWithEndpoint(app, 'http://127.0.0.1:9/never');
  await app.admin.call('jobs.create', { brandAccountId: brand.accountId });
  const waiting = async () =>
    (
      await sql<{ n: number }>(
        'select count(*)::int as n from events where account_id = ? and position is null and endpoint_id is not null',
        [brand.accountId],
      )
    )[0]!.n;
  assert.is(await waiting(), 1, 'no feed read and no worker: the event waits for its position');

  const day = dayName(now);
  await advanceSeconds(33 * 86_400);
  await purge();
  assert.ok((await partitions()).has(`events_p${day}`), 'its day is kept: its delivery is not in the queue yet');
  assert.is(await waiting(), 1);

  // A month later, the contact signs in again.
  await app.admin.call('contacts.create', { accountId: brand.accountId, email: `again-${brand.email}` });
  const refresh = await refreshTokenFor(app, `again-${brand.email}`);
  const access = (await app.http.post('/v3/auth/access-token').set('authorization', `Bearer ${refresh}`).send({})).body
    .access_token as string;
  assert.is((await feed(app, access)).body.items.length, 1, 'the feed read positions it');
  assert.is(await waiting(), 0, 'positioned');
  await sql('delete from delivery_queue where delivery_id in (select id from deliveries where account_id = ?)', [
    brand.accountId,
  ]);
  await sql(`update deliveries set status = 'failed', failed_at = updated_at where account_id = ?`, [brand.accountId]);
  await purge();
  assert.not.ok((await partitions()).has(`events_p${day}`), 'then dropped');
});

test('the days are UTC days whatever the session says: its time zone (a DST change) and its DateStyle', async () => {
  const { app } = await setUp(0);
  // The second Sunday of March of a year of this run's own: the clocks of Los Angeles go forward an hour.
  const year = 2100 + Math.floor(Math.random() * 800);
  const firstSunday = 1 + ((7 - new Date(Date.UTC(year, 2, 1)).getUTCDay()) % 7);
  const change = Date.UTC(year, 2, firstSunday + 7);
  const days = [-1, 0, 1].map((n) => new Date(change + n * DAY));
  const hours = await app.database.orm.em.fork().transactional(async (em) => {
    await em.execute("set local timezone = 'America/Los_Angeles'");
    await em.execute("set local datestyle = 'SQL, DMY'");
    await em.execute('select history_partitions_ahead(?, 3)', [new Date(change - 2 * DAY + 12 * 3_600_000)]);
    await em.execute("set local timezone = 'UTC'");
    await em.execute("set local datestyle = 'ISO, YMD'");
    return em.execute<{ name: string; lower: string; hours: number }[]>(
      `select name, to_char(lower, 'YYYY-MM-DD HH24:MI') as lower, extract(epoch from upper - lower)::int / 3600 as hours
       from history_partitions where name = any(?) order by name`,
      [`{${days.map((d) => `events_p${dayName(d)}`).join(',')}}`],
    );
  });
  assert.equal(
    hours,
    days.map((d) => ({ name: `events_p${dayName(d)}`, lower: `${d.toISOString().slice(0, 10)} 00:00`, hours: 24 })),
  );
});

test("a day's rows written before its partition was made stay in the default; the row purge takes them", async () => {
  const { app, sql, advance, purge, partitions, now } = await setUp(farDay(1400));
  const brand = await brandWithEndpoint(app, null);
  await app.admin.call('jobs.create', { brandAccountId: brand.accountId });
  const place = () =>
    sql<{ part: string }>('select tableoid::regclass::text as part from events where account_id = ?', [
      brand.accountId,
    ]);
  assert.equal(await place(), [{ part: 'events_default' }], 'no partition for that day yet');
  await purge();
  const made = await partitions();
  assert.not.ok(made.has(`events_p${dayName(now)}`), 'not made over rows already in the default partition');
  assert.ok(made.has(`events_p${dayName(new Date(now.getTime() + DAY))}`), 'the next day is made');
  assert.equal(await place(), [{ part: 'events_default' }], 'the row stays where it is');

  await advance(31);
  await purge();
  assert.equal(await place(), [], 'purged row by row past retention');
});

test("across days: one order's events keep their feed order, and redeliver-failed requeues them in it", async () => {
  const { app, sql, advance, purge } = await setUp(farDay(2100));
  await purge();
  const brand = await brandWithEndpoint(app, 'http://127.0.0.1:9/never');
  const first = (await app.admin.call('jobs.create', { brandAccountId: brand.accountId })) as { apiId: string };
  await advance(1);
  const second = (await app.admin.call('jobs.create', { brandAccountId: brand.accountId })) as { apiId: string };
  await app.admin.call('jobs.setStatus', { apiId: first.apiId, status: 'started' });
  const spread = await sql<{ n: number }>(
    'select count(distinct tableoid)::int as n from events where account_id = ?',
    [brand.accountId],
  );
  assert.is(spread[0]!.n, 2, 'two days, two partitions');

  // A day later, the contact signs in again.
  await app.admin.call('contacts.create', { accountId: brand.accountId, email: `again-${brand.email}` });
  const refresh = await refreshTokenFor(app, `again-${brand.email}`);
  const access = (await app.http.post('/v3/auth/access-token').set('authorization', `Bearer ${refresh}`).send({})).body
    .access_token as string;
  const items = (await feed(app, access)).body.items as unknown[];
  const orders = (
    await sql<{ order_id: string }>('select order_id from events where account_id = ? order by position', [
      brand.accountId,
    ])
  ).map((r) => r.order_id);
  assert.equal(orders, [first.apiId, second.apiId, first.apiId], 'positions follow the commits, across the days');
  assert.is(items.length, 3, 'the feed reads them all, across both partitions');

  await sql('delete from delivery_queue where delivery_id in (select id from deliveries where account_id = ?)', [
    brand.accountId,
  ]);
  await sql(`update deliveries set status = 'failed', failed_at = updated_at where account_id = ?`, [brand.accountId]);
  const since = new Date(Date.now() - DAY).toISOString();
  const again = await app.admin.call('deliveries.redeliverFailed', { accountId: brand.accountId, since });
  assert.equal(again, { count: 3 }, 'every failed delivery of both days');
  const queued = await sql<{ order_id: string }>(
    `select q.order_id from delivery_queue q join deliveries d on d.id = q.delivery_id and d.created_at = q.created_at
     where d.account_id = ? order by q.position`,
    [brand.accountId],
  );
  assert.equal(
    queued.map((r) => r.order_id),
    [first.apiId, second.apiId, first.apiId],
    'queued again in feed order',
  );
});

test.run();
