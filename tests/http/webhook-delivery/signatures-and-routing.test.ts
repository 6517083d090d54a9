import { createHmac, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { integrator } from '../../support/integrators.ts';
import { startReceiver } from '../../support/receiver.ts';
import { account, app, configure, createJob, deliveriesOf, ofOrder, withDeliveryApp } from './support.ts';

// How a delivery is signed, and which endpoint gets which event: brand, partner, a child's master, the sender of a
// command, none while a configuration is disabled.
const test = suite('webhook delivery from the outbox: signatures and routing');
withDeliveryApp(test);

const setStatus = (apiId: string, status: string) => app.admin.call('jobs.setStatus', { apiId, status });

test("both signatures verify with the receivers' usual code; without a key there are none", async () => {
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
  const last = ofOrder(receiver.received, apiId)
    .filter((x) => x.payload.orderId)
    .at(-1)!;
  assert.is(last.headers['x-webhook-signature'], undefined);
  assert.is(last.headers['webhook-signature'], undefined);
  assert.is(last.headers['webhook-id'], last.payload._eid);
});

test("routing: brand, partner, a child without a configuration (its master's), a child with its own, and reassignment", async () => {
  const receiver = await startReceiver();
  const brand = await account('brand');
  const master = await account('partner');
  const child = await account('partner', master);
  const own = await account('partner', master);
  await configure(brand, 'brand', receiver.url('/brand'));
  await configure(master, 'partner', receiver.url('/master'), {
    version: '1.1.0',
    signatureKey: 'master-key-0123456789',
  });
  await configure(own, 'partner', receiver.url('/own'), { transformer: 'partner-format', version: '1.3.0' });
  const apiId = await createJob(brand, child);
  await receiver.until((r) => ofOrder(r, apiId).length === 2);
  const [toBrand, toMaster] = [
    ofOrder(receiver.received, apiId).find((r) => r.payload.orderId),
    ofOrder(receiver.received, apiId).find((r) => r.payload.jobApiId),
  ];
  assert.equal([toBrand?.payload._v, toBrand?.headers['x-webhook-signature']], ['1.3.0', undefined]);
  assert.equal(
    [toMaster?.payload._v, 'partnerId' in (toMaster?.payload ?? {})],
    ['1.1.0', false],
    "the child receives in its master's version",
  );
  assert.is(
    toMaster?.headers['x-webhook-signature'],
    createHmac('sha256', 'master-key-0123456789').update(toMaster!.body).digest('hex'),
    'and with its key',
  );

  await app.admin.call('jobs.assign', { apiId, partnerId: own });
  await receiver.until((r) => ofOrder(r, apiId).length === 4);
  const afterAssign = ofOrder(receiver.received, apiId).slice(2);
  assert.equal(
    afterAssign.map((r) => (r.payload.orderId ? 'brand' : r.payload._v)).sort(),
    ['1.3.0', 'brand'],
    'the new partner gets it in its own version',
  );
  const ownEvent = afterAssign.find((r) => r.payload.jobApiId)!;
  assert.is(ownEvent.payload.partnerId, own);
  await setStatus(apiId, 'started');
  await receiver.until((r) => ofOrder(r, apiId).length === 6);
  const masterEvents = ofOrder(receiver.received, apiId).filter((r) => r.payload._v === '1.1.0');
  assert.is(masterEvents.length, 1, 'the former partner gets nothing after the reassignment');
});

test("command results go to the sender: a brand's to its brand endpoint, a child partner's to its master's", async () => {
  const app2 = app;
  const receiver = await startReceiver();
  const brand = await integrator(app2, 'brand');
  const master = await integrator(app2, 'partner');
  const child = await integrator(app2, 'partner', master.accountId);
  await configure(brand.accountId, 'brand', receiver.url('/brand'));
  await configure(master.accountId, 'partner', receiver.url('/master'));
  const apiId = await createJob(brand.accountId, child.accountId);
  const brandCid = randomUUID();
  assert.is(
    (
      await app.http
        .post('/v3/commands')
        .set('authorization', `Bearer ${brand.accessToken}`)
        .send({ _v: '1.0.0', _cid: brandCid, _type: 'RefreshOrder', orderId: apiId })
    ).status,
    202,
  );
  const partnerCid = randomUUID();
  assert.is(
    (
      await app.http
        .post('/v3/commands/partner/your-order-id')
        .set('authorization', `Bearer ${child.accessToken}`)
        .send({ _v: '1.0.0', _cid: partnerCid, _type: 'SetJobYourOrderId', jobApiId: apiId, yourOrderID: 'Y-1' })
    ).status,
    200,
  );
  const results = await receiver.until((r) => r.filter((x) => x.payload._type === 'CommandResultEvent').length >= 2);
  const brandResult = results.find((r) => r.payload._cid === brandCid)!;
  const partnerResult = results.find((r) => r.payload._cid === partnerCid)!;
  assert.equal([brandResult.payload.commandType, brandResult.payload.result], ['RefreshOrder', { orderId: apiId }]);
  assert.equal(
    [partnerResult.payload.commandType, partnerResult.payload.result],
    ['SetJobYourOrderId', { orderId: apiId }],
  );
  const polled = await app.http.get(`/v3/commands/${partnerCid}`).set('authorization', `Bearer ${child.accessToken}`);
  assert.equal(polled.body, partnerResult.payload, 'the delivered result is the polled one');
  // A result belongs to no order, so it may come before the order's own events: count those once all are delivered.
  const settled = async () =>
    (await Promise.all([brand.accountId, master.accountId].map(deliveriesOf)))
      .flat()
      .every((d) => d.status !== 'pending');
  for (const deadline = Date.now() + 10_000; !(await settled()); await new Promise((r) => setTimeout(r, 50)))
    assert.ok(Date.now() < deadline, 'every delivery of both endpoints made within 10 s');
  const refreshes = receiver.received.filter(
    (r) => r.payload._type === 'OrderStatusEvent' && r.payload.jobApiId === apiId,
  );
  assert.is(
    refreshes.length,
    2,
    'RefreshOrder re-emits to the brand only: the partner has the creation and its own change',
  );
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
  await app.http
    .post('/v3/commands')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({ _v: '1.0.0', _cid: randomUUID(), _type: 'RefreshOrder', orderId: apiId });
  // The command's own CommandResultEvent goes to the same endpoint, in no set order against the order's event.
  const [refreshed] = ofOrder(await receiver.until((r) => ofOrder(r, apiId).length === 1), apiId);
  assert.is(refreshed!.payload.status, 'started');
});

test.run();
