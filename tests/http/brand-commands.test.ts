import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import type { Principal } from '../../domain/auth.ts';
import type { BrandCommand } from '../../domain/command.ts';
import { DomainError } from '../../domain/errors.ts';
import { acceptCommand } from '../../domain/use-cases/accept-command.ts';
import { snapshot } from '../support/snapshot.ts';

type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Who = Awaited<ReturnType<typeof integrator>>;
const test = suite('brand commands over REST, run by the executor');

let app: App;
let brand: Who, otherBrand: Who, partner: Who;
const tag = randomUUID().slice(0, 8);
const order = (name: string) => `${name}-${tag}`;

test.before(async () => {
  app = await appWithMailbox();
  app.worker.start();
  brand = await integrator(app, 'brand');
  otherBrand = await integrator(app, 'brand');
  partner = await integrator(app, 'partner');
  await app.admin.call('webhookConfigs.upsert', { accountId: brand.accountId, scope: 'brand', transformer: 'default', version: '1.1.0' });
  await app.admin.call('webhookConfigs.upsert', { accountId: partner.accountId, scope: 'partner', transformer: 'partner-format', version: '1.3.0' });
  for (const name of ['refresh', 'customer', 'ids', 'cancel', 'pending', 'closed', 'race', 'replay', 'rpc', 'duel']) {
    await app.admin.call('jobs.create', { brandAccountId: brand.accountId, partnerId: partner.accountId, apiId: order(name), status: 'accepted' });
  }
  await app.admin.call('jobs.setStatus', { apiId: order('closed'), status: 'closed' });
  await app.admin.call('jobs.create', { brandAccountId: otherBrand.accountId, apiId: order('theirs') });
});
test.after(() => app.worker.stop());

const command = (type: string, fields: Record<string, unknown>, cid: string = randomUUID()) => ({ _v: '1.0.0', _cid: cid, _type: type, ...fields });
const send = (who: Who, body: unknown) => app.http.post('/v3/commands').set('authorization', `Bearer ${who.accessToken}`).send(body as object);
const poll = (who: Who, cid: string) => app.http.get(`/v3/commands/${encodeURIComponent(cid)}`).set('authorization', `Bearer ${who.accessToken}`);

/** The result event once the command has run (204 until then). */
async function outcome(who: Who, cid: string, timeoutMs = 10_000): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await poll(who, cid);
    if (res.status === 200) return res.body;
    assert.is(res.status, 204, JSON.stringify(res.body));
    assert.is(res.text, '');
    if (Date.now() > deadline) throw new Error(`no result for ${cid} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
async function run(who: Who, body: Record<string, unknown>) {
  const res = await send(who, body);
  assert.is(res.status, 202, JSON.stringify(res.body));
  assert.equal(res.body, { _cid: body._cid, _type: body._type, status: 'accepted' });
  return outcome(who, body._cid as string);
}
const eventsOf = (accountId: string, orderId: string | null = null) =>
  app.services.unitOfWork().statements(async (d) => (await d.events.recentFor(accountId, 1000)).filter((e) => orderId === null || e.orderId === orderId));
const pollOrder = (who: Who, orderId: string) => app.http.get(`/v3/poll/job/*/${orderId}`).set('authorization', `Bearer ${who.accessToken}`);

test('a partner token is 401; invalid envelopes and bodies are 400 with issues and store nothing; fixed, the same _cid is accepted', async () => {
  const refused = await send(partner, command('RefreshOrder', { orderId: order('refresh') }));
  assert.is(refused.status, 401);
  assert.match(refused.body.detail, 'needs a brand access token');
  const cid = randomUUID();
  const before = await snapshot(app.database);
  for (const [body, path] of [
    [command('Nope', { orderId: 'x' }, cid), '_type'],
    [{ ...command('RefreshOrder', { orderId: 'x' }, cid), _v: '2.0.0' }, '_v'],
    [command('RefreshOrder', {}, cid), 'orderId'],
    [command('RefreshOrder', { orderId: 'x', extra: 1 }, cid), 'extra'],
    [command('UpdateCustomer', { orderId: 'x', customer: {} }, cid), 'customer'],
    [command('UpdateCustomer', { orderId: 'x', customer: { email: 'nope' } }, cid), 'customer.email'],
    [command('CreateOrderFromMapping', { orders: [] }, cid), 'orders'],
    [{ ...command('RefreshOrder', { orderId: 'x' }, cid), _metadata: { ref: '1' } }, '_metadata.ref'],
    [{ _v: '1.0.0', _type: 'RefreshOrder', orderId: 'x' }, '_cid'],
  ] as const) {
    const res = await send(brand, body);
    assert.is(res.status, 400, JSON.stringify(body));
    assert.is(res.body.code, 'BAD_REQUEST');
    assert.ok(res.body.issues.some((i: { path: string }) => i.path === path), `${JSON.stringify(res.body.issues)} lacks ${path}`);
  }
  assert.equal(await snapshot(app.database), before, 'nothing stored');
  const fixed = await run(brand, command('RefreshOrder', { orderId: order('refresh') }, cid));
  assert.is(fixed._type, 'CommandResultEvent');
});

test('RefreshOrder: OrderStatusEvent again to the brand only; the result event goes to the sender and is polled', async () => {
  const brandBefore = (await eventsOf(brand.accountId, order('refresh'))).length;
  const partnerBefore = (await eventsOf(partner.accountId, order('refresh'))).length;
  const body = { ...command('RefreshOrder', { orderId: order('refresh') }), _metadata: { 'ext-ref': 'R-1' } };
  const result = await run(brand, body);
  assert.equal({ ...result, _eid: 'x' }, {
    _eid: 'x', _type: 'CommandResultEvent', _v: '1.1.0', _cid: body._cid, commandType: 'RefreshOrder', _metadata: { 'ext-ref': 'R-1' },
    result: { orderId: order('refresh') },
  });
  assert.is((await eventsOf(brand.accountId, order('refresh'))).length, brandBefore + 1);
  assert.is((await eventsOf(partner.accountId, order('refresh'))).length, partnerBefore);
  const [stored] = (await eventsOf(brand.accountId)).filter((e) => e.payload._eid === result._eid);
  assert.equal(stored?.payload, result, 'the polled result is the stored event');
  assert.is(stored?.type, 'CommandResultEvent');
});

test('RefreshInvoice: the InvoiceEvent to the brand; another brand\'s invoice is INVOICE_NOT_FOUND', async () => {
  const { id } = await app.admin.call<{ id: string }>('invoices.create', {
    orderId: order('refresh'), number: `R-${tag}`, type: 'invoice', status: 'paid', items: [{ description: 'Wallbox', quantity: 1, unitPrice: 899, total: 899 }],
  });
  const result = await run(brand, command('RefreshInvoice', { invoiceId: id }));
  assert.equal(result.result, { invoiceId: id });
  const invoiceEvent = (await eventsOf(brand.accountId, order('refresh'))).find((e) => e.type === 'InvoiceEvent');
  assert.equal(invoiceEvent?.payload.items, [{ description: 'Wallbox', quantity: 1, unitPrice: 899, total: 899 }]);
  assert.equal([invoiceEvent?.payload._v, invoiceEvent?.payload.status], ['1.1.0', 'paid']);
  const theirs = await run(otherBrand, command('RefreshInvoice', { invoiceId: id }));
  assert.equal([theirs._type, theirs.code], ['CommandErrorEvent', 'INVOICE_NOT_FOUND']);
});

test('UpdateCustomer, UpdateOrderExternalId, UpdateOrderInvoicingExternalId change what they name, and nothing else', async () => {
  await run(brand, command('UpdateCustomer', { orderId: order('customer'), customer: { firstName: 'Ada', phone: '+49 1' } }));
  await run(brand, command('UpdateCustomer', { orderId: order('customer'), customer: { lastName: 'Lovelace', phone: null } }));
  await run(brand, command('UpdateOrderExternalId', { orderId: order('customer'), externalId: `SHOP-${tag}` }));
  const last = await run(brand, command('UpdateOrderInvoicingExternalId', { orderId: order('customer'), invoicingExternalId: `INV-${tag}` }));
  assert.equal(last.result, { orderId: order('customer') });
  const polled = (await pollOrder(brand, order('customer'))).body;
  assert.equal(polled.customer, { email: null, externalId: null, firstName: 'Ada', lastName: 'Lovelace', mobilePhone: null, phone: null, salutation: null });
  assert.equal([polled.externalId, polled.invoicingExternalId, polled.status], [`SHOP-${tag}`, `INV-${tag}`, 'accepted']);
});

test('ApplyCancellation: reasons lead to cancelled or pending; terminal jobs, unknown reasons and other brands\' orders fail', async () => {
  assert.equal((await run(brand, command('ApplyCancellation', { orderId: order('pending'), cancellationReason: 'CUSTOMER_UNREACHABLE' }))).result, { orderId: order('pending') });
  assert.is((await pollOrder(brand, order('pending'))).body.status, 'brand_cancellation_pending');
  await run(brand, command('ApplyCancellation', { orderId: order('pending'), cancellationReason: 'DUPLICATE_ORDER' }));
  assert.is((await pollOrder(brand, order('pending'))).body.status, 'cancelled', 'a cancelled reason finishes a pending cancellation');
  await run(brand, command('ApplyCancellation', { orderId: order('cancel'), cancellationReason: 'CUSTOMER_WITHDREW' }));
  assert.is((await pollOrder(brand, order('cancel'))).body.status, 'cancelled');
  for (const [fields, code] of [
    [{ orderId: order('cancel'), cancellationReason: 'CUSTOMER_WITHDREW' }, 'INVALID_STATE'],
    [{ orderId: order('closed'), cancellationReason: 'CUSTOMER_WITHDREW' }, 'INVALID_STATE'],
    [{ orderId: order('refresh'), cancellationReason: 'BORED' }, 'UNKNOWN_CANCELLATION_REASON'],
    [{ orderId: order('theirs'), cancellationReason: 'CUSTOMER_WITHDREW' }, 'ORDER_NOT_FOUND'],
  ] as const) {
    const failed = await run(brand, command('ApplyCancellation', fields));
    assert.equal([failed._type, failed.code, failed.details], ['CommandErrorEvent', code, null], JSON.stringify(fields));
  }
  const closedPolled = await pollOrder(brand, order('closed'));
  assert.is(closedPolled.body.status, 'closed', 'a refused command changes nothing');
  assert.equal((await run(brand, command('UpdateOrderExternalId', { orderId: order('closed'), externalId: 'x' }))).code, 'INVALID_STATE');
  assert.equal((await run(brand, command('RefreshOrder', { orderId: order('closed') })))._type, 'CommandResultEvent', 'refresh works in every state');
});

test('CreateOrderFromMapping: without a mapping, 100 orders in input order, and one bad key among them creating nothing', async () => {
  const noMapping = await run(brand, command('CreateOrderFromMapping', { orders: [{ mapping: [{ key: 'city', value: 'Berlin' }] }] }));
  assert.is(noMapping.code, 'MAPPING_NOT_CONFIGURED');
  await app.admin.call('orderMappings.upsert', { brandAccountId: brand.accountId, fields: [
    { key: 'first_name', target: 'customer.firstName', required: true },
    { key: 'city', target: 'shippingAddress.city', required: true },
    { key: 'wallbox_sku', target: 'products[0].sku' },
    { key: 'wallbox_qty', target: 'products[0].quantity' },
    { key: 'shop_order', target: 'externalId' },
  ] });
  const items = (i: number) => [
    { key: 'first_name', value: `Customer ${i}` }, { key: 'city', value: 'Berlin' }, { key: 'wallbox_sku', value: 'WB-11KW' },
    { key: 'wallbox_qty', value: '1' }, { key: 'shop_order', value: `SHOP-${tag}-${i}` },
  ];
  const orders = Array.from({ length: 100 }, (_, i) => ({ mapping: items(i) }));
  const bad = structuredClone(orders);
  bad[17]!.mapping.push({ key: 'colour', value: 'red' });
  bad[42]!.mapping = bad[42]!.mapping.filter((m) => m.key !== 'city');
  bad[42]!.mapping.push({ key: 'wallbox_qty', value: 'one' });
  const jobsBefore = (await snapshot(app.database)).jobs;
  const refused = await run(brand, command('CreateOrderFromMapping', { orders: bad }));
  assert.is(refused.code, 'MAPPING_INVALID');
  assert.equal(refused.details.map((d: { key: string }) => d.key).sort(), ['orders[17].colour', 'orders[42].city', 'orders[42].wallbox_qty']);
  assert.is((await snapshot(app.database)).jobs, jobsBefore, 'nothing created');

  const created = await run(brand, command('CreateOrderFromMapping', { orders }));
  const ids: string[] = created.result.orderIds;
  assert.is(ids.length, 100);
  for (const [i, id] of ids.entries()) {
    if (i % 33 !== 0) continue;
    const polled = (await pollOrder(brand, id)).body;
    assert.equal([polled.externalId, polled.status, polled.customer.firstName, polled.products], [`SHOP-${tag}-${i}`, 'new', `Customer ${i}`, [{ sku: 'WB-11KW', name: null, quantity: 1 }]]);
    assert.match(polled.orderNumber, /^O-\d{10}$/);
  }
  const jobs = await app.services.unitOfWork().statements(async (d) => Promise.all(ids.map((id) => d.jobs.get(id))));
  assert.ok(jobs.every((j) => j!.partnerId === null && j!.brandAccountId === brand.accountId));
  assert.is(new Set(jobs.map((j) => j!.name)).size, 100);
});

test('a _cid that needs encoding in a path is polled by its encoded form', async () => {
  const cid = `refresh ${tag} #1/ä`;
  const result = await run(brand, command('RefreshOrder', { orderId: order('refresh') }, cid));
  assert.is(result._cid, cid);
  assert.is((await poll(brand, cid)).status, 200);
});

test('results: 204 until run, then 200; another account\'s or an unknown _cid is 404; a partner polls its partner command', async () => {
  assert.is((await poll(brand, `unknown-${tag}`)).status, 404);
  const body = command('RefreshOrder', { orderId: order('refresh') });
  await run(brand, body);
  assert.is((await poll(otherBrand, body._cid)).status, 404);
  assert.is((await poll(partner, body._cid)).status, 404);
  const cid = randomUUID();
  const answer = await app.http.post('/v3/commands/partner/appointment').set('authorization', `Bearer ${partner.accessToken}`)
    .send({ _v: '1.0.0', _cid: cid, _type: 'SetJobAppointment', jobApiId: order('refresh'), appointmentStart: '2026-12-01T09:00:00+01:00' });
  assert.is(answer.status, 200);
  const result = (await poll(partner, cid)).body;
  assert.equal([result._type, result.commandType, result.result, result._v], ['CommandResultEvent', 'SetJobAppointment', { orderId: order('refresh') }, '1.3.0']);
  const stored = (await eventsOf(partner.accountId)).find((e) => e.payload._eid === result._eid);
  assert.is(stored?.type, 'CommandResultEvent', 'recorded in the outbox with the change');
  assert.is((await poll(brand, cid)).status, 404);
});

test('20 concurrent posts with one _cid and one body: one execution, twenty equal 202s; another body is 409', async () => {
  const body = command('RefreshOrder', { orderId: order('replay') });
  const before = (await eventsOf(brand.accountId, order('replay'))).length;
  const answers = await Promise.all(Array.from({ length: 20 }, () => send(brand, body)));
  assert.equal(answers.map((a) => a.status), Array(20).fill(202));
  for (const a of answers) assert.equal(a.body, answers[0]!.body);
  await outcome(brand, body._cid);
  const results = (await eventsOf(brand.accountId)).filter((e) => e.type === 'CommandResultEvent' && e.payload._cid === body._cid);
  assert.is(results.length, 1, 'one execution');
  assert.is((await eventsOf(brand.accountId, order('replay'))).length, before + 1);
  const other = await send(brand, { ...body, orderId: order('refresh') });
  assert.equal([other.status, other.body.code], [409, 'CONFLICT']);
  const failed = command('RefreshOrder', { orderId: 'missing' });
  assert.is((await run(brand, failed)).code, 'ORDER_NOT_FOUND');
  assert.equal((await send(brand, failed)).body, { _cid: failed._cid, _type: 'RefreshOrder', status: 'accepted' }, 'a failed command keeps its _cid');
});

test('the _cid race on either database: accepts of one _cid started together interleave, and the later finds the earlier\'s row', async () => {
  // Over HTTP the 20 posts above race only as the server lets them. Here the use case runs on the real command log,
  // several accepts started in one tick: each statement commits alone, so even the embedded database's single
  // connection interleaves them (the first one's insert, then the second one's), and a server runs them at once.
  const principal = { accountId: brand.accountId, role: 'brand' } as Principal;
  const accept = (body: Record<string, unknown>) => app.services.unitOfWork().statements((d) => acceptCommand(d, principal, body as unknown as BrandCommand));
  const rows = async (cid: string) => (await app.database.orm.em.getConnection().execute<{ n: number }[]>(
    'select count(*)::int as n from commands where account_id = ? and cid = ?', [brand.accountId, cid]))[0]!.n;
  for (let round = 0; round < 5; round++) {
    const body = command('RefreshOrder', { orderId: order('duel') });
    const answers = await Promise.all(Array.from({ length: 4 }, () => accept(body)));
    assert.equal(answers, Array(4).fill({ _cid: body._cid, _type: 'RefreshOrder', status: 'accepted' }), `round ${round}: one answer for all`);
    assert.is(await rows(body._cid), 1, `round ${round}: one row`);
  }
  for (let round = 0; round < 5; round++) {
    const cid = randomUUID();
    const bodies = [command('RefreshOrder', { orderId: order('duel') }, cid), command('UpdateOrderExternalId', { orderId: order('duel'), externalId: `D-${round}` }, cid)];
    const settled = await Promise.allSettled(bodies.map(accept));
    const won = settled.findIndex((s) => s.status === 'fulfilled');
    assert.ok(won >= 0, `round ${round}: one of them is accepted: ${JSON.stringify(settled.map((s) => s.status === 'rejected' ? String(s.reason) : s.value))}`);
    const lost = settled[1 - won]!;
    assert.is(lost.status, 'rejected', `round ${round}: the other is refused`);
    const reason = (lost as PromiseRejectedResult).reason;
    assert.ok(reason instanceof DomainError && reason.code === 'CONFLICT', `round ${round}: refused as a conflict, not ${String(reason)}`);
    assert.is(await rows(cid), 1);
    const again = await send(brand, bodies[won]!);
    assert.equal([again.status, again.body._type], [202, bodies[won]!._type], `round ${round}: the winner holds the _cid`);
  }
});

test('a _cid resent with a body that differs only inside a nested member is 409; the nested key order does not matter', async () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>][] = [
    ['a nested customer field',
      command('UpdateCustomer', { orderId: order('customer'), customer: { firstName: 'Ada', lastName: 'Lovelace' } }),
      { customer: { firstName: 'Ada', lastName: 'Byron' } }, { customer: { lastName: 'Lovelace', firstName: 'Ada' } }],
    ['a _metadata value',
      { ...command('RefreshOrder', { orderId: order('customer') }), _metadata: { 'ext-a': '1', 'ext-b': '2' } },
      { _metadata: { 'ext-a': '1', 'ext-b': '3' } }, { _metadata: { 'ext-b': '2', 'ext-a': '1' } }],
    ['a mapping value two levels down',
      command('CreateOrderFromMapping', { orders: [{ mapping: [{ key: 'first_name', value: 'Ada' }, { key: 'city', value: 'Berlin' }] }] }),
      { orders: [{ mapping: [{ key: 'first_name', value: 'Ada' }, { key: 'city', value: 'Bonn' }] }] },
      { orders: [{ mapping: [{ value: 'Ada', key: 'first_name' }, { value: 'Berlin', key: 'city' }] }] }],
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
  const body = { ...command('UpdateOrderExternalId', { orderId: order('rpc'), externalId: 'E-1' }), _metadata: { 'ext-a': '1', 'ext-b': '2' } };
  assert.is((await send(brand, body)).status, 202);
  const reordered = { ...Object.fromEntries(Object.entries(body).reverse()), _metadata: { 'ext-b': '2', 'ext-a': '1' } };
  const rpc = await app.http.post('/trpc/commands.send').set('authorization', `Bearer ${brand.accessToken}`).send(reordered);
  assert.equal([rpc.status, rpc.body.result?.data], [200, { _cid: body._cid, _type: body._type, status: 'accepted' }]);
  const viaRpc = command('UpdateOrderExternalId', { orderId: order('rpc'), externalId: 'E-2' });
  assert.is((await app.http.post('/trpc/commands.send').set('authorization', `Bearer ${brand.accessToken}`).send(viaRpc)).status, 200);
  assert.is((await send(brand, viaRpc)).status, 202);
  assert.is((await send(brand, { ...viaRpc, _metadata: { 'ext-x': '1' } })).status, 409);
  await outcome(brand, viaRpc._cid);
  const results = (await eventsOf(brand.accountId)).filter((e) => e.type === 'CommandResultEvent' && ([body._cid, viaRpc._cid] as string[]).includes(e.payload._cid as string));
  assert.is(results.length, 2, 'each ran once');
});

test('30 concurrent commands of both kinds on one order: the last event shows the order as polled, in commit order', async () => {
  const target = order('race');
  const brandCommands = Array.from({ length: 15 }, (_, i) => i % 2
    ? command('UpdateOrderExternalId', { orderId: target, externalId: `E-${i}` })
    : command('UpdateCustomer', { orderId: target, customer: { firstName: `F-${i}` } }));
  const partnerCommands = Array.from({ length: 15 }, (_, i) => ({
    _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobYourOrderId', jobApiId: target, yourOrderID: `P-${i}`,
  }));
  const answers = await Promise.all([
    ...brandCommands.map((c) => send(brand, c)),
    ...partnerCommands.map((c) => app.http.post('/v3/commands/partner/your-order-id').set('authorization', `Bearer ${partner.accessToken}`).send(c)),
  ]);
  assert.ok(answers.every((a) => a.status === 202 || a.status === 200), JSON.stringify(answers.map((a) => a.status)));
  for (const c of brandCommands) assert.is((await outcome(brand, c._cid))._type, 'CommandResultEvent');

  const polled = (await pollOrder(brand, target)).body;
  const brandEvents = (await eventsOf(brand.accountId, target)).filter((e) => e.type === 'OrderStatusEvent').reverse();
  const last = brandEvents.at(-1)!.payload;
  assert.equal({ ...last, _eid: 'polled' }, { ...polled, _v: last._v }, 'the last event is the order as it is now');
  const times = brandEvents.map((e) => e.payload.updatedAt as string);
  assert.equal(times, [...times].sort(), 'each event shows a later state than the one before');
  const partnerEvents = (await eventsOf(partner.accountId, target)).filter((e) => e.type === 'OrderStatusEvent').reverse();
  const partnerPolled = (await pollOrder(partner, target)).body;
  assert.equal({ ...partnerEvents.at(-1)!.payload, _eid: 'polled' }, partnerPolled);
});

test.run();
