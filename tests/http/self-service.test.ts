import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { startReceiver } from '../support/receiver.ts';
import { closeAtEnd } from '../support/shared.ts';

type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Json = Record<string, any>;
const test = suite('integrator self-service: event feed, delivery log, replay, endpoint test');
let app: App;

test.before(async () => {
  app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '100ms', WEBHOOK_TIMEOUT_MS: '600', TEST_CLOCK: '1' });
  app.worker.start();
});
test.after(() => app.worker.stop());

const configure = (accountId: string, scope: 'brand' | 'partner', url: string | null, extra: Record<string, unknown> = {}) =>
  app.admin.call('webhookConfigs.upsert', { accountId, scope, url, transformer: scope === 'brand' ? 'default' : 'partner-format', version: '1.3.0', ...extra });
const createJob = async (brandId: string, partnerId?: string) =>
  (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brandId, ...(partnerId && { partnerId }) })).apiId;
const setStatus = (apiId: string, status: string) => app.admin.call('jobs.setStatus', { apiId, status });
const get = (path: string, token: string) => app.http.get(path).set('authorization', `Bearer ${token}`);
const post = (path: string, token: string, body: object = {}) => app.http.post(path).set('authorization', `Bearer ${token}`).send(body);

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
    assert.ok(page <= maxPages, `the feed did not end within ${maxPages} pages of ${limit} (${items.length} events read)`);
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

test('the feed: every event of the caller\'s endpoint, oldest first, exactly as stored; nobody else\'s', async () => {
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
  assert.equal(items, stored.map((e) => e.payload), 'the payloads as stored, in order');
  assert.equal(items.map((e) => [e.orderId, e.status]), [[first, 'new'], [second, 'new'], [first, 'open'], [second, 'cancelled']]);
  assert.ok(next, 'an empty page still says where to go on from');

  await setStatus(first, 'accepted');
  // An event is served once it has its position: the read positions what committed before it, unless a sequencer of
  // another process is at it just then (the suites share the database), which positions it within its round.
  let more = await get(`/v3/events?after=${encodeURIComponent(next!)}`, brand.accessToken);
  for (let i = 0; i < 50 && more.body.items.length === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    more = await get(`/v3/events?after=${encodeURIComponent(next!)}`, brand.accessToken);
  }
  assert.equal(more.body.items.map((e: Json) => [e.orderId, e.status]), [[first, 'accepted']], 'only what came after the cursor');
  assert.equal((await drain(other.accessToken)).items.map((e) => e.orderId).includes(first), false);
});

test('a child partner without a configuration reads its master\'s feed; no endpoint is 403 (partner) or 404 (brand)', async () => {
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
  assert.equal(ofChild.map((e) => [e.jobApiId, e.status]), [[apiId, 'new'], [apiId, 'accepted']]);
  assert.is((await get('/v3/events', loner.accessToken)).status, 403);
  const none = await get('/v3/events', brand.accessToken);
  assert.is(none.status, 404);
  assert.match(none.body.detail, /PUT \/v3\/webhook-config/);
});

test('limit and cursor are checked: out of bounds or foreign is 400, never 500', async () => {
  const brand = await integrator(app, 'brand');
  await configure(brand.accountId, 'brand', null);
  for (const query of ['limit=0', 'limit=501', 'limit=abc', 'after=not-a-cursor', `after=${Buffer.from('[1]').toString('base64url')}`]) {
    const res = await get(`/v3/events?${query}`, brand.accessToken);
    assert.is(res.status, 400, query);
    assert.is(res.body.code, 'BAD_REQUEST');
  }
  assert.is((await get('/v3/events?limit=500', brand.accessToken)).status, 200);
  assert.is((await app.http.get('/v3/events')).status, 401);
});

/** A receiver that fails until told otherwise. */
async function flakyReceiver() {
  let healthy = false;
  const receiver = await startReceiver(() => (healthy ? 200 : 503));
  return { ...receiver, recover: () => { healthy = true; } };
}

test('delivery log and replay: every attempt is logged; after recovery, redeliver-failed sends every failed event, in order per order', async () => {
  const receiver = await flakyReceiver();
  const brand = await integrator(app, 'brand');
  const stranger = await integrator(app, 'brand');
  await configure(brand.accountId, 'brand', receiver.url('/brand'));
  await configure(stranger.accountId, 'brand', null);
  const since = new Date(Date.now() - 60_000).toISOString();
  const orders = [await createJob(brand.accountId), await createJob(brand.accountId)];
  for (const status of ['open', 'accepted', 'started']) for (const apiId of orders) await setStatus(apiId, status);

  // Two durable attempts each (WEBHOOK_RETRY_SCHEDULE has one retry; a 503 waits for it like any answer), each logged,
  // then failed.
  let log: Json[] = [];
  for (let i = 0; i < 200; i++) {
    const res = await get('/v3/webhook-deliveries?status=failed&limit=100', brand.accessToken);
    assert.is(res.status, 200);
    log = res.body.items;
    if (log.length === 8) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.is(log.length, 8, 'every event failed');
  for (const d of log) {
    assert.is(d.attempts.length, 2, 'two attempts, each one request');
    assert.ok(d.attempts.every((a: Json) => a.statusCode === 503));
    assert.match(d.attempts[0].error, /503/);
    assert.is(d.url, receiver.url('/brand'));
  }
  const paged = await get('/v3/webhook-deliveries?limit=3', brand.accessToken);
  assert.is(paged.body.items.length, 3);
  const rest = await get(`/v3/webhook-deliveries?limit=100&before=${encodeURIComponent(paged.body.next)}`, brand.accessToken);
  assert.equal([...paged.body.items, ...rest.body.items].map((d: Json) => d.id), (await get('/v3/webhook-deliveries?limit=100', brand.accessToken)).body.items.map((d: Json) => d.id));
  assert.is(rest.body.next, null, 'the last page');

  const foreign = await post(`/v3/webhook-deliveries/${log[0]!.id}/redeliver`, stranger.accessToken);
  assert.is(foreign.status, 404, 'another endpoint\'s delivery does not exist for the caller');
  assert.is((await get('/v3/webhook-deliveries', stranger.accessToken)).body.items.length, 0);

  receiver.recover();
  const before = receiver.received.length;
  const replay = await post('/v3/webhook-deliveries/redeliver-failed', brand.accessToken, { since });
  assert.is(replay.status, 202);
  assert.equal(replay.body, { count: 8 });
  await receiver.until((r) => r.slice(before).filter((x) => x.answered === 200).length === 8);
  for (const apiId of orders) {
    const statuses = receiver.received.slice(before).filter((x) => x.payload.orderId === apiId).map((x) => x.payload.status);
    assert.equal(statuses, ['new', 'open', 'accepted', 'started'], 'in the order of the changes');
  }
  // An attempt is recorded just after the receiver has answered it.
  let delivered: Json[] = [];
  for (let i = 0; i < 100 && delivered.length < 8; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    delivered = (await get('/v3/webhook-deliveries?status=delivered', brand.accessToken)).body.items;
  }
  assert.is(delivered.length, 8);
  assert.ok(delivered.every((d: Json) => d.attempts.length >= 3 && d.attempts.at(-1).statusCode === 200 && d.attempts[0].statusCode === 503), 'the attempts continue');

  const again = await post(`/v3/webhook-deliveries/${log[0]!.id}/redeliver`, brand.accessToken);
  assert.is(again.status, 202);
  assert.equal(again.body, { id: log[0]!.id, status: 'pending' });
  const sentBefore = receiver.received.filter((x) => x.headers['webhook-id'] === log[0]!.eventId).length;
  await receiver.until((r) => r.filter((x) => x.headers['webhook-id'] === log[0]!.eventId).length === sentBefore + 1);
  assert.is((await post(`/v3/webhook-deliveries/${randomUUID()}/redeliver`, brand.accessToken)).status, 404);
  assert.is((await post('/v3/webhook-deliveries/redeliver-failed', brand.accessToken, { since: 'yesterday' })).status, 400);
});

/** A receiver that takes every request and never answers it. */
async function silentReceiver() {
  const server: Server = createServer(() => { /* never answers */ });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAtEnd(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

test('endpoint test: what the endpoint did, signed like a delivery, nothing stored; 10 a minute', async () => {
  const receiver = await startReceiver(({ n }) => (n === 2 ? 500 : 200));
  const brand = await integrator(app, 'brand');
  const whsec = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;
  assert.is((await post('/v3/webhook-config/test', brand.accessToken)).status, 404, 'no configuration');
  await configure(brand.accountId, 'brand', null);
  assert.is((await post('/v3/webhook-config/test', brand.accessToken)).status, 404, 'no URL');
  await configure(brand.accountId, 'brand', receiver.url('/test'), { signatureKey: whsec, enabled: false });

  const outcomes: Json[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await post('/v3/webhook-config/test', brand.accessToken);
    assert.is(res.status, 200, JSON.stringify(res.body));
    outcomes.push(res.body);
  }
  assert.equal(outcomes.map((o) => [o.statusCode, o.delivered]), [[200, true], [500, false], [200, true], [200, true]], 'each test tried once, as answered');
  const sent = receiver.received.filter((r) => r.payload._type === 'WebhookTestEvent');
  assert.is(sent.length, 4, 'a disabled endpoint is tested too');
  sent.forEach((r, i) => {
    assert.equal(Object.keys(r.payload).sort(), ['_eid', '_type', '_v', 'sentAt']);
    assert.is(r.payload._v, '1.3.0');
    assert.is(r.headers['x-webhook-signature'], createHmac('sha256', whsec).update(r.body).digest('hex'));
    assert.equal(new Webhook(whsec).verify(r.body, r.headers as Record<string, string>), r.payload);
    const outcome = outcomes[i]!;
    assert.is(outcome.statusCode, r.answered);
    assert.is(outcome.delivered, r.answered === 200);
    if (outcome.delivered) assert.is(outcome.error, null);
    else assert.match(outcome.error, /500/);
  });
  assert.is((await app.services.unitOfWork().statements((d) => d.events.recentFor(brand.accountId, 10))).length, 0, 'nothing stored');

  await configure(brand.accountId, 'brand', await silentReceiver());
  const timedOut = await post('/v3/webhook-config/test', brand.accessToken);
  assert.equal({ ...timedOut.body, durationMs: 0, error: typeof timedOut.body.error }, { delivered: false, statusCode: null, durationMs: 0, error: 'string' });
  assert.ok(timedOut.body.durationMs >= 500, `waited for the timeout (${timedOut.body.durationMs} ms)`);

  const strict = await appWithMailbox({ WEBHOOK_ALLOW_PRIVATE_TARGETS: '0' });
  const refused = await strict.http.post('/v3/webhook-config/test').set('authorization', `Bearer ${brand.accessToken}`).send({});
  assert.is(refused.status, 200);
  assert.is(refused.body.delivered, false);
  assert.match(refused.body.error, /private|loopback|refused/i, refused.body.error);

  const busy = await integrator(app, 'brand');
  await configure(busy.accountId, 'brand', receiver.url('/busy'));
  for (let i = 1; i <= 10; i++) assert.is((await post('/v3/webhook-config/test', busy.accessToken)).status, 200, `test ${i}`);
  const limited = await post('/v3/webhook-config/test', busy.accessToken);
  assert.is(limited.status, 429);
  assert.ok(Number(limited.headers['retry-after']) >= 1);
});

test('endpoint test: 10 a minute per endpoint too, so two children sharing their master\'s endpoint have 10 between them', async () => {
  const receiver = await startReceiver();
  const master = await integrator(app, 'partner');
  await configure(master.accountId, 'partner', receiver.url('/shared'));
  const children = [await integrator(app, 'partner', master.accountId), await integrator(app, 'partner', master.accountId)];
  // Five each: neither child reaches its own 10, the endpoint they share does.
  for (let i = 1; i <= 5; i++) {
    for (const [c, child] of children.entries()) {
      assert.is((await post('/v3/webhook-config/test', child.accessToken)).status, 200, `child ${c}, test ${i}`);
    }
  }
  const limited = await post('/v3/webhook-config/test', children[0]!.accessToken);
  assert.is(limited.status, 429, 'the shared endpoint\'s 11th test in the minute');
  assert.ok(Number(limited.headers['retry-after']) >= 1);
  assert.is(receiver.received.length, 10, 'the refused test was not sent');
});

test('a partner\'s signature key, replaced over PUT /v3/webhook-config, holds from its next command on', async () => {
  const brand = await integrator(app, 'brand');
  const partner = await integrator(app, 'partner');
  const [oldKey, newKey] = ['old-signing-key-0123456789', 'new-signing-key-0123456789'];
  await configure(partner.accountId, 'partner', null, { signatureKey: oldKey });
  const job = await createJob(brand.accountId, partner.accountId);
  await setStatus(job, 'accepted');
  const command = (key: string) => {
    const raw = JSON.stringify({ _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobYourOrderId', jobApiId: job, yourOrderID: `Y-${randomUUID()}` });
    return app.http.post('/v3/commands/partner/your-order-id').set('authorization', `Bearer ${partner.accessToken}`)
      .set('content-type', 'application/json').set('x-webhook-signature', createHmac('sha256', key).update(raw).digest('hex')).send(raw);
  };
  assert.is((await command(oldKey)).status, 200);
  const put = await app.http.put('/v3/webhook-config').set('authorization', `Bearer ${partner.accessToken}`)
    .send({ url: 'https://hooks.example.com/partner', enabled: false, transformer: 'partner-format', version: '1.3.0', signatureKey: newKey });
  assert.is(put.status, 200, JSON.stringify(put.body));
  assert.is((await command(oldKey)).status, 401, 'the old key no longer signs');
  assert.is((await command(newKey)).status, 200, 'the new key does');
});

test.run();
