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
  loner,
  master,
  post,
  sibling,
  stranger,
  tag,
  withPartnerCommandsApp,
  YOUR_ORDER_ID,
} from './support.ts';

// Which job a partner command finds by each identifier, and which jobs a partner may command (its own, a master its
// children's), whatever other tenants hold.
const test = suite('partner commands over REST: finding the job');
withPartnerCommandsApp(test);

test("each identifier finds its job; the answer carries the order in the caller's shape", async () => {
  const cases: Record<string, string>[] = [
    { jobApiId: job.child1!.apiId },
    { invoicingEid: `INV-${tag}` },
    { gidOrderNumber: job.child1!.name },
    { yourOrderID: `P-${tag}` },
  ];
  for (const identifier of cases) {
    const body = appointment(identifier);
    const res = await post(child, APPOINTMENT, body);
    assert.is(res.status, 200, JSON.stringify([identifier, res.body]));
    assert.equal(
      { ...res.body, order: undefined },
      { _cid: body._cid, _type: 'SetJobAppointment', status: 'succeeded', order: undefined },
    );
    assert.equal(
      [res.body.order.jobApiId, res.body.order.status, res.body.order._v],
      [job.child1!.apiId, 'appointment_confirmed', '1.3.0'],
    );
    assert.equal(
      [res.body.order.appointmentStart, res.body.order.appointmentEnd],
      ['2026-12-01T08:00:00.000Z', '2026-12-01T10:00:00.000Z'],
    );
  }
});

test("ownership: the master acts on its child's job; an unrelated partner is 403; a brand token is 401", async () => {
  assert.is((await post(master, APPOINTMENT, appointment({ jobApiId: job.child1!.apiId }))).status, 200);
  const refused = await post(stranger, APPOINTMENT, appointment({ jobApiId: job.child1!.apiId }), null);
  assert.is(refused.status, 403);
  assert.is(refused.body.code, 'FORBIDDEN');
  assert.is((await post(brand, APPOINTMENT, appointment({ jobApiId: job.child1!.apiId }), null)).status, 401);
  assert.is(
    (await post(child, APPOINTMENT, appointment({ jobApiId: job.loner1!.apiId }))).status,
    403,
    "a sibling's job from another family",
  );
});

test("ownership: a child may not command its sibling's job nor its master's own job (403, nothing changes), on both endpoints", async () => {
  const yourOrderId = (identifier: Record<string, string>) => ({
    _v: '1.0.0',
    _cid: randomUUID(),
    _type: 'SetJobYourOrderId',
    ...identifier,
    yourOrderID: `X-${randomUUID().slice(0, 8)}`,
  });
  const targets = [
    ['sibling', job.sibling1!],
    ['master', job.master1!],
  ] as const;
  for (const [whose, target] of targets) {
    const before = (await eventsFor(brand.accountId, target.apiId)).length;
    for (const identifier of [{ jobApiId: target.apiId }, { gidOrderNumber: target.name }] as Record<
      string,
      string
    >[]) {
      for (const [path, body] of [
        [APPOINTMENT, appointment(identifier)],
        [YOUR_ORDER_ID, yourOrderId(identifier)],
      ] as const) {
        const res = await post(child, path, body);
        assert.is(
          res.status,
          403,
          `child on its ${whose}'s job via ${path} ${JSON.stringify(identifier)}: ${JSON.stringify(res.body)}`,
        );
        assert.is(res.body.code, 'FORBIDDEN');
      }
    }
    assert.is((await eventsFor(brand.accountId, target.apiId)).length, before, `the ${whose}'s job did not change`);
  }
  // The sibling is refused the child's job likewise, and the master may still command its children's jobs and its own.
  assert.is((await post(sibling, YOUR_ORDER_ID, yourOrderId({ jobApiId: job.child1!.apiId }))).status, 403);
  assert.is((await post(master, APPOINTMENT, appointment({ jobApiId: job.sibling1!.apiId }))).status, 200);
  assert.is((await post(master, YOUR_ORDER_ID, yourOrderId({ jobApiId: job.master1!.apiId }))).status, 200);
});

test("several matches: the caller's own is taken; several of the caller's → 409", async () => {
  const shared = await post(loner, APPOINTMENT, appointment({ gidOrderNumber: `O-SHARED-${tag}` }), null);
  assert.is(shared.status, 200);
  assert.is(shared.body.order.jobApiId, job.loner1!.apiId);
  const mine = await post(child, APPOINTMENT, appointment({ gidOrderNumber: `O-SHARED-${tag}` }));
  assert.is(mine.body.order.jobApiId, job.child2!.apiId);
  const twice = await post(loner, APPOINTMENT, appointment({ invoicingEid: `INV-TWICE-${tag}` }), null);
  assert.is(twice.status, 409);
});

test("other tenants' jobs with the same identifier neither hide the caller's job nor count against it", async () => {
  const value = `DUP-${randomUUID().slice(0, 8)}`;
  for (let i = 0; i < 3; i++)
    await app.admin.call('jobs.create', {
      brandAccountId: brand.accountId,
      partnerId: stranger.accountId,
      extPartnerId: value,
    });
  const mine = await app.admin.call<{ apiId: string }>('jobs.create', {
    brandAccountId: brand.accountId,
    partnerId: loner.accountId,
    extPartnerId: value,
  });
  const res = await post(loner, APPOINTMENT, appointment({ yourOrderID: value }), null);
  assert.equal([res.status, res.body.order?.jobApiId], [200, mine.apiId]);
});

test.run();
