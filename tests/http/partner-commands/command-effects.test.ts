import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  APPOINTMENT,
  app,
  appointment,
  brand,
  child,
  eventsFor,
  job,
  post,
  withPartnerCommandsApp,
  YOUR_ORDER_ID,
} from './support.ts';

// What a partner command changes and stores: the events for each receiver, the job's own reference.
const test = suite('partner commands over REST: what each command does');
withPartnerCommandsApp(test);

test('the events stored carry the right _type, _v and shape for each receiver', async () => {
  const body = appointment({ jobApiId: job.child1!.apiId });
  await post(child, APPOINTMENT, body);
  const [toBrand] = await eventsFor(brand.accountId, job.child1!.apiId);
  const [toChild] = await eventsFor(child.accountId, job.child1!.apiId);
  assert.equal(
    [toBrand!.type, toBrand!.payload._type, toBrand!.payload._v, toBrand!.payload.orderId, toBrand!.payload.status],
    ['OrderStatusEvent', 'OrderStatusEvent', '1.1.0', job.child1!.apiId, 'appointment_confirmed'],
  );
  assert.ok('projectId' in toBrand!.payload && !('updatedAt' in toBrand!.payload), 'default 1.1.0');
  assert.equal(
    [toChild!.payload._v, toChild!.payload.jobApiId, toChild!.payload.partnerId],
    ['1.3.0', job.child1!.apiId, child.accountId],
  );
  assert.is(toChild!.payload._eid, toChild!.id);
});

test('SetJobYourOrderId keeps the status; the new value is a lookup key for SetJobAppointment afterwards', async () => {
  await app.admin.call('jobs.setStatus', { apiId: job.child2!.apiId, status: 'started' });
  const value = `MY-${randomUUID().slice(0, 8)}`;
  const res = await post(child, YOUR_ORDER_ID, {
    _v: '1.0.0',
    _cid: randomUUID(),
    _type: 'SetJobYourOrderId',
    jobApiId: job.child2!.apiId,
    yourOrderID: value,
  });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal([res.body.order.status, res.body.order.yourOrderID], ['started', value]);
  const next = await post(child, APPOINTMENT, appointment({ yourOrderID: value }));
  assert.equal([next.status, next.body.order.jobApiId], [200, job.child2!.apiId]);
});

test.run();
