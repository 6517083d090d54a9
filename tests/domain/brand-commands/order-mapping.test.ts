import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBrandCommand } from '../../../domain/brand-commands.ts';
import type { BrandCommand } from '../../../domain/command.ts';
import { mapOrder, OrderMapping } from '../../../domain/order-mapping.ts';
import { upsertOrderMapping } from '../../../domain/use-cases/upsert-order-mapping.ts';
import { fakeDeps } from '../../fakes.ts';
import { envelope, failsWith, world } from './support.ts';

// A brand's order mapping: how its keys land on an order, and CreateOrderFromMapping, which creates orders through it.
const test = suite('brand commands on the pure domain: order mapping');

test("order mapping: dotted paths with list indexes, every problem under the brand's own key", () => {
  const mapping = OrderMapping.create(
    'b',
    [
      { key: 'first', target: 'customer.firstName', required: true },
      { key: 'mail', target: 'customer.email', required: false },
      { key: 'city', target: 'shippingAddress.city', required: true },
      { key: 'country', target: 'shippingAddress.countryCode', required: false },
      { key: 'sku2', target: 'products[2].sku', required: false },
      { key: 'sku0', target: 'products[0].sku', required: false },
      { key: 'qty0', target: 'products[0].quantity', required: false },
      { key: 'photo', target: 'documents[0].files[1].url', required: false },
      { key: 'ext', target: 'externalId', required: false },
    ],
    new Date(),
  );
  const ok = mapOrder(mapping, [
    { key: 'first', value: 'Ada' },
    { key: 'city', value: 'Berlin' },
    { key: 'sku2', value: 'C' },
    { key: 'sku0', value: 'A' },
    { key: 'qty0', value: '3' },
    { key: 'photo', value: 'https://files.example.com/p.jpg' },
    { key: 'ext', value: 'SHOP-7' },
  ]);
  assert.equal(ok.problems, []);
  assert.equal(ok.order?.customer, {
    email: null,
    externalId: null,
    firstName: 'Ada',
    lastName: null,
    mobilePhone: null,
    phone: null,
    salutation: null,
  });
  assert.equal(ok.order?.shippingAddress, {
    street: null,
    houseNumber: null,
    postalCode: null,
    city: 'Berlin',
    countryCode: null,
  });
  assert.equal(
    ok.order?.products,
    [
      { sku: 'A', name: null, quantity: 3 },
      { sku: 'C', name: null, quantity: null },
    ],
    'index order, gaps left out',
  );
  assert.equal(ok.order?.documents, [{ type: null, files: [{ name: null, url: 'https://files.example.com/p.jpg' }] }]);
  assert.is(ok.order?.eid, 'SHOP-7');

  const bad = mapOrder(mapping, [
    { key: 'mail', value: 'not-an-address' },
    { key: 'country', value: 'Germany' },
    { key: 'qty0', value: '-1' },
    { key: 'unknown', value: 'x' },
    { key: 'city', value: 'A' },
    { key: 'city', value: 'B' },
    { key: 'sku0', value: '  ' },
  ]);
  assert.equal(bad.order, null);
  assert.equal(bad.problems.map((p) => p.key).sort(), ['city', 'country', 'first', 'mail', 'qty0', 'sku0', 'unknown']);
});

test('CreateOrderFromMapping: all or nothing, orders in input order, MAPPING_NOT_CONFIGURED without a mapping', async () => {
  const deps = fakeDeps();
  const { brand, other } = await world(deps);
  const create = (brandId: string, orders: { key: string; value: string }[][]) =>
    runBrandCommand(deps, brandId, {
      ...envelope('CreateOrderFromMapping'),
      orders: orders.map((mapping) => ({ mapping })),
    } as BrandCommand);
  await failsWith(create(brand.id, [[{ key: 'city', value: 'Berlin' }]]), 'MAPPING_NOT_CONFIGURED');
  await upsertOrderMapping(deps, {
    brandAccountId: brand.id,
    fields: [
      { key: 'city', target: 'shippingAddress.city', required: true },
      { key: 'n', target: 'projectName', required: false },
    ],
  });
  const jobsBefore = deps.jobs.all().length;
  const error = await failsWith(
    create(brand.id, [
      [{ key: 'city', value: 'A' }],
      [{ key: 'n', value: 'x' }],
      [
        { key: 'zip', value: '1' },
        { key: 'city', value: 'C' },
      ],
    ]),
    'MAPPING_INVALID',
  );
  assert.equal(error.details, [
    { key: 'orders[1].city', message: 'is required' },
    { key: 'orders[2].zip', message: 'is not a key of your order mapping' },
  ]);
  assert.is(deps.jobs.all().length, jobsBefore, 'nothing created');
  const result = await create(brand.id, [
    [{ key: 'city', value: 'A' }],
    [
      { key: 'city', value: 'B' },
      { key: 'n', value: 'P' },
    ],
  ]);
  const ids = (result as { orderIds: string[] }).orderIds;
  assert.equal(
    ids.map((id) => deps.jobs.all().find((j) => j.apiId === id)?.shippingAddress?.city),
    ['A', 'B'],
  );
  for (const id of ids) {
    const job = deps.jobs.all().find((j) => j.apiId === id)!;
    assert.equal([job.status, job.partnerId, job.brandAccountId], ['new', null, brand.id]);
    assert.match(job.name, /^O-\d{10}$/);
  }
  await failsWith(create(other.id, [[{ key: 'city', value: 'A' }]]), 'MAPPING_NOT_CONFIGURED');
});

test.run();
