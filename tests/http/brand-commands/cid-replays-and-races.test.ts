import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Principal } from '../../../domain/auth.ts';
import type { BrandCommand } from '../../../domain/command.ts';
import { DomainError } from '../../../domain/errors.ts';
import { acceptCommand } from '../../../domain/use-cases/accept-command.ts';
import {
  app,
  brand,
  command,
  eventsOf,
  order,
  outcome,
  partner,
  pollOrder,
  run,
  send,
  withBrandCommandsApp,
} from './support.ts';

// A _cid sent again, over either transport or at once, runs its command once; concurrent commands commit in order.
const test = suite('brand commands over REST: _cid replays and races');
withBrandCommandsApp(test);

test('20 concurrent posts with one _cid and one body: one execution, twenty equal 202s; another body is 409', async () => {
  const body = command('RefreshOrder', { orderId: order('replay') });
  const before = (await eventsOf(brand.accountId, order('replay'))).length;
  const answers = await Promise.all(Array.from({ length: 20 }, () => send(brand, body)));
  assert.equal(
    answers.map((a) => a.status),
    Array(20).fill(202),
  );
  for (const a of answers) assert.equal(a.body, answers[0]!.body);
  await outcome(brand, body._cid);
  const results = (await eventsOf(brand.accountId)).filter(
    (e) => e.type === 'CommandResultEvent' && e.payload._cid === body._cid,
  );
  assert.is(results.length, 1, 'one execution');
  assert.is((await eventsOf(brand.accountId, order('replay'))).length, before + 1);
  const other = await send(brand, { ...body, orderId: order('refresh') });
  assert.equal([other.status, other.body.code], [409, 'CONFLICT']);
  const failed = command('RefreshOrder', { orderId: 'missing' });
  assert.is((await run(brand, failed)).code, 'ORDER_NOT_FOUND');
  assert.equal(
    (await send(brand, failed)).body,
    { _cid: failed._cid, _type: 'RefreshOrder', status: 'accepted' },
    'a failed command keeps its _cid',
  );
});

test("the _cid race on either database: accepts of one _cid started together interleave, and the later finds the earlier's row", async () => {
  // Over HTTP the 20 posts above race only as the server lets them. Here the use case runs on the real command log,
  // several accepts started in one tick: each statement commits alone, so even the embedded database's single
  // connection interleaves them (the first one's insert, then the second one's), and a server runs them at once.
  const principal = { accountId: brand.accountId, role: 'brand' } as Principal;
  const accept = (body: Record<string, unknown>) =>
    app.services.unitOfWork().statements((d) => acceptCommand(d, principal, body as unknown as BrandCommand));
  const rows = async (cid: string) =>
    (
      await app.database.orm.em
        .getConnection()
        .execute<{ n: number }[]>('select count(*)::int as n from commands where account_id = ? and cid = ?', [
          brand.accountId,
          cid,
        ])
    )[0]!.n;
  for (let round = 0; round < 5; round++) {
    const body = command('RefreshOrder', { orderId: order('duel') });
    const answers = await Promise.all(Array.from({ length: 4 }, () => accept(body)));
    assert.equal(
      answers,
      Array(4).fill({ _cid: body._cid, _type: 'RefreshOrder', status: 'accepted' }),
      `round ${round}: one answer for all`,
    );
    assert.is(await rows(body._cid), 1, `round ${round}: one row`);
  }
  for (let round = 0; round < 5; round++) {
    const cid = randomUUID();
    const bodies = [
      command('RefreshOrder', { orderId: order('duel') }, cid),
      command('UpdateOrderExternalId', { orderId: order('duel'), externalId: `D-${round}` }, cid),
    ];
    const settled = await Promise.allSettled(bodies.map(accept));
    const won = settled.findIndex((s) => s.status === 'fulfilled');
    assert.ok(
      won >= 0,
      `round ${round}: one of them is accepted: ${JSON.stringify(settled.map((s) => (s.status === 'rejected' ? String(s.reason) : s.value)))}`,
    );
    const lost = settled[1 - won]!;
    assert.is(lost.status, 'rejected', `round ${round}: the other is refused`);
    const reason = (lost as PromiseRejectedResult).reason;
    assert.ok(
      reason instanceof DomainError && reason.code === 'CONFLICT',
      `round ${round}: refused as a conflict, not ${String(reason)}`,
    );
    assert.is(await rows(cid), 1);
    const again = await send(brand, bodies[won]!);
    assert.equal(
      [again.status, again.body._type],
      [202, bodies[won]!._type],
      `round ${round}: the winner holds the _cid`,
    );
  }
});

test('a _cid resent with a body that differs only inside a nested member is 409; the nested key order does not matter', async () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>][] = [
    [
      'a nested customer field',
      command('UpdateCustomer', { orderId: order('customer'), customer: { firstName: 'Ada', lastName: 'Lovelace' } }),
      { customer: { firstName: 'Ada', lastName: 'Byron' } },
      { customer: { lastName: 'Lovelace', firstName: 'Ada' } },
    ],
    [
      'a _metadata value',
      { ...command('RefreshOrder', { orderId: order('customer') }), _metadata: { 'ext-a': '1', 'ext-b': '2' } },
      { _metadata: { 'ext-a': '1', 'ext-b': '3' } },
      { _metadata: { 'ext-b': '2', 'ext-a': '1' } },
    ],
    [
      'a mapping value two levels down',
      command('CreateOrderFromMapping', {
        orders: [
          {
            mapping: [
              { key: 'first_name', value: 'Ada' },
              { key: 'city', value: 'Berlin' },
            ],
          },
        ],
      }),
      {
        orders: [
          {
            mapping: [
              { key: 'first_name', value: 'Ada' },
              { key: 'city', value: 'Bonn' },
            ],
          },
        ],
      },
      {
        orders: [
          {
            mapping: [
              { value: 'Ada', key: 'first_name' },
              { value: 'Berlin', key: 'city' },
            ],
          },
        ],
      },
    ],
  ];
  for (const [label, body, change, reordered] of cases) {
    const first = await send(brand, body);
    assert.is(first.status, 202, `${label}: ${JSON.stringify(first.body)}`);
    const other = await send(brand, { ...body, ...change });
    assert.equal([other.status, other.body.code], [409, 'CONFLICT'], label);
    const replay = await send(brand, { ...body, ...reordered });
    assert.equal([replay.status, replay.body], [202, first.body], `${label}: the same body, keys reordered, replays`);
  }
});

test('one command whatever the transport: sent over REST and replayed over /trpc, and the other way', async () => {
  const body = {
    ...command('UpdateOrderExternalId', { orderId: order('rpc'), externalId: 'E-1' }),
    _metadata: { 'ext-a': '1', 'ext-b': '2' },
  };
  assert.is((await send(brand, body)).status, 202);
  const reordered = {
    ...Object.fromEntries(Object.entries(body).reverse()),
    _metadata: { 'ext-b': '2', 'ext-a': '1' },
  };
  const rpc = await app.http
    .post('/trpc/commands.send')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send(reordered);
  assert.equal([rpc.status, rpc.body.result?.data], [200, { _cid: body._cid, _type: body._type, status: 'accepted' }]);
  const viaRpc = command('UpdateOrderExternalId', { orderId: order('rpc'), externalId: 'E-2' });
  assert.is(
    (await app.http.post('/trpc/commands.send').set('authorization', `Bearer ${brand.accessToken}`).send(viaRpc))
      .status,
    200,
  );
  assert.is((await send(brand, viaRpc)).status, 202);
  assert.is((await send(brand, { ...viaRpc, _metadata: { 'ext-x': '1' } })).status, 409);
  await outcome(brand, viaRpc._cid);
  const results = (await eventsOf(brand.accountId)).filter(
    (e) => e.type === 'CommandResultEvent' && ([body._cid, viaRpc._cid] as string[]).includes(e.payload._cid as string),
  );
  assert.is(results.length, 2, 'each ran once');
});

test('30 concurrent commands of both kinds on one order: the last event shows the order as polled, in commit order', async () => {
  const target = order('race');
  const brandCommands = Array.from({ length: 15 }, (_, i) =>
    i % 2
      ? command('UpdateOrderExternalId', { orderId: target, externalId: `E-${i}` })
      : command('UpdateCustomer', { orderId: target, customer: { firstName: `F-${i}` } }),
  );
  const partnerCommands = Array.from({ length: 15 }, (_, i) => ({
    _v: '1.0.0',
    _cid: randomUUID(),
    _type: 'SetJobYourOrderId',
    jobApiId: target,
    yourOrderID: `P-${i}`,
  }));
  const answers = await Promise.all([
    ...brandCommands.map((c) => send(brand, c)),
    ...partnerCommands.map((c) =>
      app.http.post('/v3/commands/partner/your-order-id').set('authorization', `Bearer ${partner.accessToken}`).send(c),
    ),
  ]);
  assert.ok(
    answers.every((a) => a.status === 202 || a.status === 200),
    JSON.stringify(answers.map((a) => a.status)),
  );
  for (const c of brandCommands) assert.is((await outcome(brand, c._cid))._type, 'CommandResultEvent');

  const polled = (await pollOrder(brand, target)).body;
  const brandEvents = (await eventsOf(brand.accountId, target)).filter((e) => e.type === 'OrderStatusEvent').reverse();
  const last = brandEvents.at(-1)!.payload;
  assert.equal({ ...last, _eid: 'polled' }, { ...polled, _v: last._v }, 'the last event is the order as it is now');
  const times = brandEvents.map((e) => e.payload.updatedAt as string);
  assert.equal(times, [...times].sort(), 'each event shows a later state than the one before');
  const partnerEvents = (await eventsOf(partner.accountId, target))
    .filter((e) => e.type === 'OrderStatusEvent')
    .reverse();
  const partnerPolled = (await pollOrder(partner, target)).body;
  assert.equal({ ...partnerEvents.at(-1)!.payload, _eid: 'polled' }, partnerPolled);
});

test.run();
