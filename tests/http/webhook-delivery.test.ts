import { createHmac, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { startReceiver, type Received } from '../support/receiver.ts';

type App = Awaited<ReturnType<typeof appWithMailbox>>;
const test = suite('webhook delivery from the outbox');
let app: App;

test.before(async () => {
  app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '150ms,150ms,150ms', WEBHOOK_TIMEOUT_MS: '2000' });
  app.worker.start();
});
test.after(() => app.worker.stop());

const account = async (role: 'brand' | 'partner', parentId?: string) =>
  (await app.admin.call<{ id: string }>('accounts.create', { name: `${role} ${randomUUID().slice(0, 6)}`, role, ...(parentId && { parentId }) })).id;
const configure = (accountId: string, scope: 'brand' | 'partner', url: string | null, extra: Record<string, unknown> = {}) =>
  app.admin.call('webhookConfigs.upsert', {
    accountId, scope, url, transformer: scope === 'brand' ? 'default' : 'partner-format', version: '1.3.0', ...extra,
  });
const createJob = async (brandId: string, partnerId?: string) =>
  (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brandId, ...(partnerId && { partnerId }), status: 'accepted' })).apiId;
const setStatus = (apiId: string, status: string) => app.admin.call('jobs.setStatus', { apiId, status });
const ofOrder = (received: Received[], orderId: string) => received.filter((r) => r.payload.orderId === orderId || r.payload.jobApiId === orderId);
const deliveriesOf = async (accountId: string) => (await app.admin.query<{ items: Record<string, any>[] }>('deliveries.list', { accountId })).items;
/** The delivery log once `done` holds: an attempt is recorded just after the receiver has answered it. */
async function logOnce(accountId: string, done: (items: Awaited<ReturnType<typeof deliveriesOf>>) => boolean) {
  for (let i = 0; ; i++) {
    const items = await deliveriesOf(accountId);
    if (done(items) || i === 100) return items;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('both signatures verify with the receivers\' usual code; without a key there are none', async () => {
  const receiver = await startReceiver();
  const brand = await account('brand');
  const partner = await account('partner');
  const whsec = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;
  await configure(brand, 'brand', receiver.url('/brand'), { signatureKey: whsec });
  await configure(partner, 'partner', receiver.url('/partner'), { signatureKey: 'partner-plain-key-0123456789' });
  const apiId = await createJob(brand, partner);
  await receiver.until((r) => ofOrder(r, apiId).length === 2);
  for (const r of ofOrder(receiver.received, apiId)) {
    const key = r.payload.orderId ? whsec : 'partner-plain-key-0123456789';
    assert.is(r.headers['webhook-id'], r.payload._eid);
    assert.ok(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
    assert.match(r.headers['content-type'] ?? '', /^application\/json/);
    assert.is(r.headers['x-webhook-signature'], createHmac('sha256', key).update(r.body).digest('hex'));
    const verifier = key.startsWith('whsec_') ? new Webhook(key) : new Webhook(key, { format: 'raw' });
    assert.equal(verifier.verify(r.body, r.headers as Record<string, string>), r.payload);
    assert.throws(() => verifier.verify(r.body.replace('accepted', 'cancelled'), r.headers as Record<string, string>));
  }
  await configure(brand, 'brand', receiver.url('/brand'), { signatureKey: null });
  await setStatus(apiId, 'started');
  await receiver.until((r) => ofOrder(r, apiId).some((x) => x.payload.status === 'started' && x.payload.orderId));
  const last = ofOrder(receiver.received, apiId).filter((x) => x.payload.orderId).at(-1)!;
  assert.is(last.headers['x-webhook-signature'], undefined);
  assert.is(last.headers['webhook-signature'], undefined);
  assert.is(last.headers['webhook-id'], last.payload._eid);
});

test('routing: brand, partner, a child without a configuration (its master\'s), a child with its own, and reassignment', async () => {
  const receiver = await startReceiver();
  const brand = await account('brand');
  const master = await account('partner');
  const child = await account('partner', master);
  const own = await account('partner', master);
  await configure(brand, 'brand', receiver.url('/brand'));
  await configure(master, 'partner', receiver.url('/master'), { version: '1.1.0', signatureKey: 'master-key-0123456789' });
  await configure(own, 'partner', receiver.url('/own'), { transformer: 'partner-format', version: '1.3.0' });
  const apiId = await createJob(brand, child);
  await receiver.until((r) => ofOrder(r, apiId).length === 2);
  const [toBrand, toMaster] = [ofOrder(receiver.received, apiId).find((r) => r.payload.orderId), ofOrder(receiver.received, apiId).find((r) => r.payload.jobApiId)];
  assert.equal([toBrand?.payload._v, toBrand?.headers['x-webhook-signature']], ['1.3.0', undefined]);
  assert.equal([toMaster?.payload._v, 'partnerId' in (toMaster?.payload ?? {})], ['1.1.0', false], 'the child receives in its master\'s version');
  assert.is(toMaster?.headers['x-webhook-signature'], createHmac('sha256', 'master-key-0123456789').update(toMaster!.body).digest('hex'), 'and with its key');

  await app.admin.call('jobs.assign', { apiId, partnerId: own });
  await receiver.until((r) => ofOrder(r, apiId).length === 4);
  const afterAssign = ofOrder(receiver.received, apiId).slice(2);
  assert.equal(afterAssign.map((r) => (r.payload.orderId ? 'brand' : r.payload._v)).sort(), ['1.3.0', 'brand'], 'the new partner gets it in its own version');
  const ownEvent = afterAssign.find((r) => r.payload.jobApiId)!;
  assert.is(ownEvent.payload.partnerId, own);
  await setStatus(apiId, 'started');
  await receiver.until((r) => ofOrder(r, apiId).length === 6);
  const masterEvents = ofOrder(receiver.received, apiId).filter((r) => r.payload._v === '1.1.0');
  assert.is(masterEvents.length, 1, 'the former partner gets nothing after the reassignment');
});

test('command results go to the sender: a brand\'s to its brand endpoint, a child partner\'s to its master\'s', async () => {
  const app2 = app;
  const receiver = await startReceiver();
  const brand = await integrator(app2, 'brand');
  const master = await integrator(app2, 'partner');
  const child = await integrator(app2, 'partner', master.accountId);
  await configure(brand.accountId, 'brand', receiver.url('/brand'));
  await configure(master.accountId, 'partner', receiver.url('/master'));
  const apiId = await createJob(brand.accountId, child.accountId);
  const brandCid = randomUUID();
  assert.is((await app.http.post('/v3/commands').set('authorization', `Bearer ${brand.accessToken}`)
    .send({ _v: '1.0.0', _cid: brandCid, _type: 'RefreshOrder', orderId: apiId })).status, 202);
  const partnerCid = randomUUID();
  assert.is((await app.http.post('/v3/commands/partner/your-order-id').set('authorization', `Bearer ${child.accessToken}`)
    .send({ _v: '1.0.0', _cid: partnerCid, _type: 'SetJobYourOrderId', jobApiId: apiId, yourOrderID: 'Y-1' })).status, 200);
  const results = await receiver.until((r) => r.filter((x) => x.payload._type === 'CommandResultEvent').length >= 2);
  const brandResult = results.find((r) => r.payload._cid === brandCid)!;
  const partnerResult = results.find((r) => r.payload._cid === partnerCid)!;
  assert.equal([brandResult.payload.commandType, brandResult.payload.result], ['RefreshOrder', { orderId: apiId }]);
  assert.equal([partnerResult.payload.commandType, partnerResult.payload.result], ['SetJobYourOrderId', { orderId: apiId }]);
  const polled = await app.http.get(`/v3/commands/${partnerCid}`).set('authorization', `Bearer ${child.accessToken}`);
  assert.equal(polled.body, partnerResult.payload, 'the delivered result is the polled one');
  const refreshes = receiver.received.filter((r) => r.payload._type === 'OrderStatusEvent' && r.payload.jobApiId === apiId);
  assert.is(refreshes.length, 2, 'RefreshOrder re-emits to the brand only: the partner has the creation and its own change');
});

test('a receiver failing twice gets the event on the third attempt; one that always fails ends failed, and redeliver heals it', async () => {
  let healthy = false;
  const receiver = await startReceiver(({ payload, n }) => (payload.status === 'open' ? (n <= 2 ? 500 : 200) : healthy ? 200 : 500));
  const brand = await account('brand');
  await configure(brand, 'brand', receiver.url());
  const flaky = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand, status: 'open' });
  await receiver.until((r) => r.some((x) => x.answered === 200 && x.payload.orderId === flaky.apiId));
  assert.equal(ofOrder(receiver.received, flaky.apiId).map((r) => r.answered), [500, 500, 200]);
  const [delivered] = await logOnce(brand, ([d]) => d?.status === 'delivered');
  assert.equal([delivered!.status, delivered!.attempts.map((a: { statusCode: number }) => a.statusCode)], ['delivered', [500, 500, 200]]);
  assert.match(delivered!.attempts[0].error, /^HTTP 500: failure 500/);
  assert.ok(delivered!.attempts[0].error.length < 220, 'only an excerpt of the answer');

  const doomed = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand, status: 'accepted' });
  const deadline = Date.now() + 10_000;
  let failed: Record<string, any> | undefined;
  while (!failed) {
    failed = (await deliveriesOf(brand)).find((d) => d.status === 'failed');
    assert.ok(Date.now() < deadline, 'never failed');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.is(failed.attempts.length, 4, 'the first attempt and the three of the schedule');
  assert.is(failed.nextAttemptAt, null);
  healthy = true;
  assert.equal(await app.admin.call('deliveries.redeliver', { deliveryId: failed.id }), { ok: true });
  await receiver.until((r) => r.some((x) => x.answered === 200 && x.payload.orderId === doomed.apiId));
  const healed = (await logOnce(brand, (items) => items.find((d) => d.id === failed!.id)?.status !== 'pending')).find((d) => d.id === failed!.id)!;
  assert.equal([healed.status, healed.attempts.length], ['delivered', 5], 'the same delivery, its attempts continued');
  assert.is((await app.admin.mutate('deliveries.redeliver', { deliveryId: randomUUID() })).status, 404);
});

test('per-order order: changes to one order arrive in order while its first is retried; another order is not held up', async () => {
  // The retry waits an hour on a test clock, moved on only once the other order has arrived: that the other order
  // went out while the first waited is then a fact of the sequence, not a race (with the suite's 150 ms schedule, a
  // loaded machine retried the first order before the test had even made the second). The suite's worker rests
  // meanwhile, so that this app's worker, with the hour-long schedule, sends everything.
  await app.worker.stop();
  const timed = await appWithMailbox({ TEST_CLOCK: '1', WEBHOOK_RETRY_SCHEDULE: '1h', WEBHOOK_TIMEOUT_MS: '2000' });
  timed.worker.start();
  try {
    let failedOnce = false;
    const receiver = await startReceiver(({ payload }) => {
      if (payload.status === 'open' && !failedOnce) { failedOnce = true; return 500; }
      return 200;
    });
    const brand = (await timed.admin.call<{ id: string }>('accounts.create', { name: `brand ${randomUUID().slice(0, 6)}`, role: 'brand' })).id;
    await timed.admin.call('webhookConfigs.upsert', { accountId: brand, scope: 'brand', url: receiver.url(), transformer: 'default', version: '1.3.0' });
    const job = async (status: string) => (await timed.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand, status })).apiId;
    const x = await job('open');
    for (const status of ['started', 'finished']) await timed.admin.call('jobs.setStatus', { apiId: x, status });
    const y = await job('accepted');
    const arrivals = (order: string) => ofOrder(receiver.received, order).map((e) => `${e.payload.status}/${e.answered}`);

    await receiver.until((r) => ofOrder(r, y).length > 0 && ofOrder(r, x).length > 0, 10_000, 'the other order, and the first try of the first');
    assert.equal(arrivals(x), ['open/500'], 'the first order\'s later changes wait behind its first, which waits for its retry');
    assert.equal(arrivals(y), ['accepted/200'], 'the other order went out meanwhile');

    await timed.admin.call('testClock.advance', { seconds: 3600 });
    await receiver.until((r) => ofOrder(r, x).filter((e) => e.answered === 200).length === 3, 10_000, 'the first order after its retry');
    assert.equal(arrivals(x), ['open/500', 'open/200', 'started/200', 'finished/200']);
  } finally {
    await timed.worker.stop();
    app.worker.start();
  }
});

test('a disabled configuration gets no delivery, and none is made up when it is enabled again; polling and RefreshOrder still serve', async () => {
  const receiver = await startReceiver();
  const brand = await integrator(app, 'brand');
  await configure(brand.accountId, 'brand', receiver.url(), { enabled: false });
  const apiId = await createJob(brand.accountId);
  await setStatus(apiId, 'started');
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.is(ofOrder(receiver.received, apiId).length, 0);
  assert.equal(await deliveriesOf(brand.accountId), []);
  const polled = await app.http.get(`/v3/poll/job/*/${apiId}`).set('authorization', `Bearer ${brand.accessToken}`);
  assert.is(polled.body.status, 'started');
  await configure(brand.accountId, 'brand', receiver.url(), { enabled: true });
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.is(ofOrder(receiver.received, apiId).length, 0, 'nothing made up');
  await app.http.post('/v3/commands').set('authorization', `Bearer ${brand.accessToken}`)
    .send({ _v: '1.0.0', _cid: randomUUID(), _type: 'RefreshOrder', orderId: apiId });
  // The command's own CommandResultEvent goes to the same endpoint, in no set order against the order's event.
  const [refreshed] = ofOrder(await receiver.until((r) => ofOrder(r, apiId).length === 1), apiId);
  assert.is(refreshed!.payload.status, 'started');
});

test('the delivery log over admin RPC: newest first, every attempt, filters', async () => {
  const receiver = await startReceiver();
  const brand = await account('brand');
  await configure(brand, 'brand', receiver.url());
  const first = await createJob(brand);
  const second = await createJob(brand);
  await receiver.until((r) => ofOrder(r, first).length + ofOrder(r, second).length === 2);
  const items = await logOnce(brand, (list) => list.length === 2 && list.every((d) => d.status === 'delivered'));
  assert.equal(items.map((d) => d.status), ['delivered', 'delivered']);
  const [newest] = items;
  assert.equal(Object.keys(newest!).sort(), ['accountId', 'attempts', 'createdAt', 'eventId', 'eventType', 'id', 'nextAttemptAt', 'orderId', 'scope', 'status', 'url'].sort());
  assert.equal([newest!.eventType, newest!.scope, newest!.url, newest!.accountId], ['OrderStatusEvent', 'brand', receiver.url(), brand]);
  assert.equal(Object.keys(newest!.attempts[0]).sort(), ['at', 'durationMs', 'error', 'statusCode']);
  assert.is(ofOrder(receiver.received, second)[0]!.payload._eid, newest!.eventId);
  assert.equal((await app.admin.query<{ items: unknown[] }>('deliveries.list', { accountId: brand, status: 'failed' })).items, []);
  assert.is((await app.admin.query<{ items: unknown[] }>('deliveries.list', { accountId: brand, limit: 1 })).items.length, 1);
  assert.is((await adminWithout().mutate('deliveries.redeliver', { deliveryId: newest!.id })).status, 401);
});

const adminWithout = () => ({ mutate: (name: string, input: unknown) => app.http.post(`/trpc/admin.${name}`).send(input as object) });

test.run();
