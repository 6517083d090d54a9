import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { startReceiver } from '../support/receiver.ts';

// CONTRACT §10's filters and statistics: one order's events and deliveries, deliveries of one event type, every listed
// delivery with its order, and an endpoint's attempts per hour or day.
type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Json = Record<string, any>;
const test = suite('integrator self-service: filters of the feed and the log, delivery statistics');
let app: App;
test.before(async () => {
  app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '1h' });
  app.worker.start();
});
test.after(() => app.worker.stop());

const get = (path: string, token: string) => app.http.get(path).set('authorization', `Bearer ${token}`);

/**
 * A brand whose endpoint answers 200 to the first five deliveries and 500 to the sixth, with two orders of three events
 * each.
 */
async function brandWithTwoOrders() {
  const receiver = await startReceiver(({ n }) => (n === 6 ? 500 : 200));
  const brand = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: receiver.url(),
    transformer: 'default',
    version: '1.3.0',
  });
  const orders: string[] = [];
  for (let n = 0; n < 2; n++) {
    const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', {
      brandAccountId: brand.accountId,
      status: 'accepted',
    });
    for (const status of ['appointment_confirmed', 'started'])
      await app.admin.call('jobs.setStatus', { apiId, status });
    orders.push(apiId);
  }
  await receiver.until((got) => got.length >= 6, 20_000, 'the six deliveries');
  // The receiver answers before the worker records the attempt: wait for the log, not only for the receipts.
  for (const deadline = Date.now() + 20_000; ; ) {
    const items = (await get('/v3/webhook-deliveries', brand.accessToken)).body.items as Json[];
    if (items.length === 6 && items.every((d) => d.attempts.length === 1)) break;
    if (Date.now() > deadline)
      throw new Error(
        `six deliveries with one attempt each, got ${JSON.stringify(items.map((d) => d.attempts.length))}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
  return { brand, orders, receiver };
}

test("GET /v3/events?orderId: that order's events only, in feed order, paged with the same cursors", async () => {
  const {
    brand,
    orders: [a, b],
  } = await brandWithTwoOrders();
  const all = (await get('/v3/events?limit=100', brand.accessToken)).body.items as Json[];
  const ofA = all.filter((e) => e.orderId === a);
  assert.is(ofA.length, 3);
  const first = await get(`/v3/events?orderId=${a}&limit=2`, brand.accessToken);
  assert.is(first.status, 200);
  assert.equal(
    first.body.items.map((e: Json) => e._eid),
    ofA.slice(0, 2).map((e) => e._eid),
  );
  const rest = await get(
    `/v3/events?orderId=${a}&limit=2&after=${encodeURIComponent(first.body.next)}`,
    brand.accessToken,
  );
  assert.equal(
    rest.body.items.map((e: Json) => e._eid),
    [ofA[2]!._eid],
  );
  assert.equal(
    (await get(`/v3/events?orderId=${b}`, brand.accessToken)).body.items.map((e: Json) => e.orderId),
    [b, b, b],
  );
  const none = await get('/v3/events?orderId=no-such-order', brand.accessToken);
  assert.equal([none.status, none.body.items, none.body.next], [200, [], null]);
});

test('GET /v3/webhook-deliveries?orderId&eventType: filtered, every delivery with its orderId', async () => {
  const {
    brand,
    orders: [a],
  } = await brandWithTwoOrders();
  const all = (await get('/v3/webhook-deliveries', brand.accessToken)).body.items as Json[];
  assert.is(all.length, 6);
  assert.ok(
    all.every((d) => typeof d.orderId === 'string'),
    'each listed with its order',
  );
  const ofA = await get(`/v3/webhook-deliveries?orderId=${a}`, brand.accessToken);
  assert.equal(
    ofA.body.items.map((d: Json) => d.orderId),
    [a, a, a],
  );
  const paged = await get(`/v3/webhook-deliveries?orderId=${a}&limit=2`, brand.accessToken);
  const more = await get(
    `/v3/webhook-deliveries?orderId=${a}&limit=2&before=${encodeURIComponent(paged.body.next)}`,
    brand.accessToken,
  );
  assert.equal(
    [...paged.body.items, ...more.body.items].map((d: Json) => d.id),
    ofA.body.items.map((d: Json) => d.id),
    'paged as without it',
  );
  assert.is((await get('/v3/webhook-deliveries?eventType=OrderStatusEvent', brand.accessToken)).body.items.length, 6);
  assert.equal((await get('/v3/webhook-deliveries?eventType=InvoiceEvent', brand.accessToken)).body.items, []);
  const failedOfA = await get(`/v3/webhook-deliveries?orderId=${a}&status=pending`, brand.accessToken);
  assert.ok(failedOfA.body.items.every((d: Json) => d.orderId === a && d.status === 'pending'));
  const bad = await get('/v3/webhook-deliveries?eventType=Nonsense', brand.accessToken);
  assert.equal([bad.status, bad.body.issues?.[0]?.path], [400, 'eventType']);
  const [adminOfA] = [
    (await app.admin.query<{ items: Json[] }>('deliveries.list', { accountId: brand.accountId, orderId: a })).items,
  ];
  assert.equal(
    adminOfA.map((d) => d.orderId),
    [a, a, a],
    'admin.deliveries.list filters the same way',
  );
});

test('GET /v3/webhook-deliveries/stats: attempts per UTC hour or day, every bucket, empty ones with zeros', async () => {
  const { brand } = await brandWithTwoOrders();
  const now = new Date();
  const hour = Math.floor(now.getTime() / 3_600_000) * 3_600_000;
  const byDefault = await get('/v3/webhook-deliveries/stats', brand.accessToken);
  assert.is(byDefault.status, 200, JSON.stringify(byDefault.body));
  assert.is(byDefault.body.bucket, 'hour');
  assert.is(byDefault.body.items.length, 25, 'the hour holding a day ago to the hour holding now');
  const last = byDefault.body.items.at(-1);
  assert.is(last.start, new Date(hour).toISOString());
  // (The six may straddle the turn of an hour: counted over the last two buckets.)
  const sum = (key: string) => byDefault.body.items.slice(-2).reduce((n: number, b: Json) => n + b[key], 0);
  assert.equal([sum('attempts'), sum('succeeded'), sum('failed')], [6, 5, 1], 'one 500, five 2xx');
  const busy = byDefault.body.items.slice(-2).find((b: Json) => b.attempts > 0);
  assert.ok(Number.isInteger(busy.p50Ms) && busy.p99Ms >= busy.p50Ms);
  assert.equal(byDefault.body.items[0], {
    start: new Date(hour - 24 * 3_600_000).toISOString(),
    attempts: 0,
    succeeded: 0,
    failed: 0,
    p50Ms: null,
    p99Ms: null,
  });
  const days = await get(
    `/v3/webhook-deliveries/stats?bucket=day&from=${new Date(hour - 3 * 86_400_000).toISOString()}`,
    brand.accessToken,
  );
  assert.equal(
    days.body.items.map((b: Json) => b.attempts).reduce((n: number, a: number) => n + a, 0),
    6,
  );
  assert.is(days.body.items.length, 4);
  assert.is(days.body.items[3].start.slice(10), 'T00:00:00.000Z', 'UTC days');
  const at = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
  const refused = async (query: string, path: string) => {
    const res = await get(`/v3/webhook-deliveries/stats?${query}`, brand.accessToken);
    assert.equal([res.status, res.body.issues?.[0]?.path], [400, path], query);
  };
  await refused(`from=${at(hour)}&to=${at(hour - 1)}`, 'from');
  await refused(`from=${at(hour - 168 * 3_600_000)}&to=${at(hour)}`, 'from');
  await refused(`bucket=day&from=${at(hour - 90 * 86_400_000)}&to=${at(hour)}`, 'from');
  await refused('bucket=week', 'bucket');
  await refused('from=yesterday', 'from');
  assert.is(
    (await get(`/v3/webhook-deliveries/stats?from=${at(hour - 167 * 3_600_000)}&to=${at(hour)}`, brand.accessToken))
      .body.items.length,
    168,
  );
});

test.run();
