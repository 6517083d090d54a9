import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { snapshot } from '../../support/snapshot.ts';
import {
  app,
  brand,
  command,
  eventsOf,
  order,
  otherBrand,
  partner,
  pollOrder,
  run,
  tag,
  withBrandCommandsApp,
} from './support.ts';

// What each brand command changes, and what it sends to whom.
const test = suite('brand commands over REST: what each command does');
withBrandCommandsApp(test);

test('RefreshOrder: OrderStatusEvent again to the brand only; the result event goes to the sender and is polled', async () => {
  const brandBefore = (await eventsOf(brand.accountId, order('refresh'))).length;
  const partnerBefore = (await eventsOf(partner.accountId, order('refresh'))).length;
  const body = { ...command('RefreshOrder', { orderId: order('refresh') }), _metadata: { 'ext-ref': 'R-1' } };
  const result = await run(brand, body);
  assert.equal(
    { ...result, _eid: 'x' },
    {
      _eid: 'x',
      _type: 'CommandResultEvent',
      _v: '1.1.0',
      _cid: body._cid,
      commandType: 'RefreshOrder',
      _metadata: { 'ext-ref': 'R-1' },
      result: { orderId: order('refresh') },
    },
  );
  assert.is((await eventsOf(brand.accountId, order('refresh'))).length, brandBefore + 1);
  assert.is((await eventsOf(partner.accountId, order('refresh'))).length, partnerBefore);
  const [stored] = (await eventsOf(brand.accountId)).filter((e) => e.payload._eid === result._eid);
  assert.equal(stored?.payload, result, 'the polled result is the stored event');
  assert.is(stored?.type, 'CommandResultEvent');
});

test("RefreshInvoice: the InvoiceEvent to the brand; another brand's invoice is INVOICE_NOT_FOUND", async () => {
  const { id } = await app.admin.call<{ id: string }>('invoices.create', {
    orderId: order('refresh'),
    number: `R-${tag}`,
    type: 'invoice',
    status: 'paid',
    items: [{ description: 'Wallbox', quantity: 1, unitPrice: 899, total: 899 }],
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
  await run(
    brand,
    command('UpdateCustomer', { orderId: order('customer'), customer: { firstName: 'Ada', phone: '+49 1' } }),
  );
  await run(
    brand,
    command('UpdateCustomer', { orderId: order('customer'), customer: { lastName: 'Lovelace', phone: null } }),
  );
  await run(brand, command('UpdateOrderExternalId', { orderId: order('customer'), externalId: `SHOP-${tag}` }));
  const last = await run(
    brand,
    command('UpdateOrderInvoicingExternalId', { orderId: order('customer'), invoicingExternalId: `INV-${tag}` }),
  );
  assert.equal(last.result, { orderId: order('customer') });
  const polled = (await pollOrder(brand, order('customer'))).body;
  assert.equal(polled.customer, {
    email: null,
    externalId: null,
    firstName: 'Ada',
    lastName: 'Lovelace',
    mobilePhone: null,
    phone: null,
    salutation: null,
  });
  assert.equal(
    [polled.externalId, polled.invoicingExternalId, polled.status],
    [`SHOP-${tag}`, `INV-${tag}`, 'accepted'],
  );
});

test("ApplyCancellation: reasons lead to cancelled or pending; terminal jobs, unknown reasons and other brands' orders fail", async () => {
  assert.equal(
    (
      await run(
        brand,
        command('ApplyCancellation', { orderId: order('pending'), cancellationReason: 'CUSTOMER_UNREACHABLE' }),
      )
    ).result,
    { orderId: order('pending') },
  );
  assert.is((await pollOrder(brand, order('pending'))).body.status, 'brand_cancellation_pending');
  await run(brand, command('ApplyCancellation', { orderId: order('pending'), cancellationReason: 'DUPLICATE_ORDER' }));
  assert.is(
    (await pollOrder(brand, order('pending'))).body.status,
    'cancelled',
    'a cancelled reason finishes a pending cancellation',
  );
  await run(brand, command('ApplyCancellation', { orderId: order('cancel'), cancellationReason: 'CUSTOMER_WITHDREW' }));
  assert.is((await pollOrder(brand, order('cancel'))).body.status, 'cancelled');
  for (const [fields, code] of [
    [{ orderId: order('cancel'), cancellationReason: 'CUSTOMER_WITHDREW' }, 'INVALID_STATE'],
    [{ orderId: order('closed'), cancellationReason: 'CUSTOMER_WITHDREW' }, 'INVALID_STATE'],
    [{ orderId: order('refresh'), cancellationReason: 'BORED' }, 'UNKNOWN_CANCELLATION_REASON'],
    [{ orderId: order('theirs'), cancellationReason: 'CUSTOMER_WITHDREW' }, 'ORDER_NOT_FOUND'],
  ] as const) {
    const failed = await run(brand, command('ApplyCancellation', fields));
    assert.equal(
      [failed._type, failed.code, failed.details],
      ['CommandErrorEvent', code, null],
      JSON.stringify(fields),
    );
  }
  const closedPolled = await pollOrder(brand, order('closed'));
  assert.is(closedPolled.body.status, 'closed', 'a refused command changes nothing');
  assert.equal(
    (await run(brand, command('UpdateOrderExternalId', { orderId: order('closed'), externalId: 'x' }))).code,
    'INVALID_STATE',
  );
  assert.equal(
    (await run(brand, command('RefreshOrder', { orderId: order('closed') })))._type,
    'CommandResultEvent',
    'refresh works in every state',
  );
});

test('CreateOrderFromMapping: without a mapping, 100 orders in input order, and one bad key among them creating nothing', async () => {
  const noMapping = await run(
    brand,
    command('CreateOrderFromMapping', { orders: [{ mapping: [{ key: 'city', value: 'Berlin' }] }] }),
  );
  assert.is(noMapping.code, 'MAPPING_NOT_CONFIGURED');
  await app.admin.call('orderMappings.upsert', {
    brandAccountId: brand.accountId,
    fields: [
      { key: 'first_name', target: 'customer.firstName', required: true },
      { key: 'city', target: 'shippingAddress.city', required: true },
      { key: 'wallbox_sku', target: 'products[0].sku' },
      { key: 'wallbox_qty', target: 'products[0].quantity' },
      { key: 'shop_order', target: 'externalId' },
    ],
  });
  const items = (i: number) => [
    { key: 'first_name', value: `Customer ${i}` },
    { key: 'city', value: 'Berlin' },
    { key: 'wallbox_sku', value: 'WB-11KW' },
    { key: 'wallbox_qty', value: '1' },
    { key: 'shop_order', value: `SHOP-${tag}-${i}` },
  ];
  const orders = Array.from({ length: 100 }, (_, i) => ({ mapping: items(i) }));
  const bad = structuredClone(orders);
  bad[17]!.mapping.push({ key: 'colour', value: 'red' });
  bad[42]!.mapping = bad[42]!.mapping.filter((m) => m.key !== 'city');
  bad[42]!.mapping.push({ key: 'wallbox_qty', value: 'one' });
  const jobsBefore = (await snapshot(app.database)).jobs;
  const refused = await run(brand, command('CreateOrderFromMapping', { orders: bad }));
  assert.is(refused.code, 'MAPPING_INVALID');
  assert.equal(refused.details.map((d: { key: string }) => d.key).sort(), [
    'orders[17].colour',
    'orders[42].city',
    'orders[42].wallbox_qty',
  ]);
  assert.is((await snapshot(app.database)).jobs, jobsBefore, 'nothing created');

  const created = await run(brand, command('CreateOrderFromMapping', { orders }));
  const ids: string[] = created.result.orderIds;
  assert.is(ids.length, 100);
  for (const [i, id] of ids.entries()) {
    if (i % 33 !== 0) continue;
    const polled = (await pollOrder(brand, id)).body;
    assert.equal(
      [polled.externalId, polled.status, polled.customer.firstName, polled.products],
      [`SHOP-${tag}-${i}`, 'new', `Customer ${i}`, [{ sku: 'WB-11KW', name: null, quantity: 1 }]],
    );
    assert.match(polled.orderNumber, /^O-\d{10}$/);
  }
  const jobs = await app.services.unitOfWork().statements(async (d) => Promise.all(ids.map((id) => d.jobs.get(id))));
  assert.ok(jobs.every((j) => j!.partnerId === null && j!.brandAccountId === brand.accountId));
  assert.is(new Set(jobs.map((j) => j!.name)).size, 100);
});

test.run();
