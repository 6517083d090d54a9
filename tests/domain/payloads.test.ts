import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Job } from '../../domain/job.ts';
import { POLLED_EID, renderOrderStatus } from '../../domain/payloads.ts';

const test = suite('OrderStatusEvent payloads');

const full = new Job({
  apiId: 'job-1',
  brandAccountId: 'brand-1',
  partnerId: 'partner-1',
  name: 'O-1000000001',
  status: 'appointment_confirmed',
  invoicingEid: 'INV-1',
  eid: 'EXT-1',
  extPartnerId: 'P-77',
  customer: {
    email: 'c@example.com',
    externalId: 'C-1',
    firstName: 'Ada',
    lastName: 'Lovelace',
    mobilePhone: '+49 1',
    phone: null,
    salutation: 'Ms',
  },
  customerBilling: {
    firstName: 'Ada',
    lastName: 'Lovelace',
    company: 'AE Ltd',
    street: 'Main',
    houseNumber: '1',
    postalCode: '10115',
    city: 'Berlin',
    countryCode: 'DE',
  },
  shippingAddress: { street: 'Main', houseNumber: '1', postalCode: '10115', city: 'Berlin', countryCode: 'DE' },
  products: [{ sku: 'WB', name: 'Wallbox', quantity: 1 }],
  documents: [{ type: 'protocol', files: [{ name: 'p.pdf', url: 'https://files.example.com/p.pdf' }] }],
  orderType: 'installation',
  projectId: 'PR-1',
  projectName: 'Fleet',
  appointmentStart: new Date('2026-12-01T08:00:00+01:00'),
  appointmentEnd: new Date('2026-12-01T10:00:00Z'),
  startTimestamp: new Date('2026-12-01T08:05:00Z'),
  finishTimestamp: null,
  createdAt: new Date('2026-11-01T00:00:00Z'),
  updatedAt: new Date('2026-11-20T10:11:12.013Z'),
});

const head = (v: string) => ({ _eid: 'e-1', _type: 'OrderStatusEvent', _v: v });
const defaultCommon = {
  orderId: 'job-1',
  orderNumber: 'O-1000000001',
  status: 'appointment_confirmed',
  externalId: 'EXT-1',
  invoicingExternalId: 'INV-1',
  orderType: 'installation',
  customer: {
    email: 'c@example.com',
    externalId: 'C-1',
    firstName: 'Ada',
    lastName: 'Lovelace',
    mobilePhone: '+49 1',
    phone: null,
    salutation: 'Ms',
  },
  customerBilling: {
    firstName: 'Ada',
    lastName: 'Lovelace',
    company: 'AE Ltd',
    street: 'Main',
    houseNumber: '1',
    postalCode: '10115',
    city: 'Berlin',
    countryCode: 'DE',
  },
  shippingAddress: { street: 'Main', houseNumber: '1', postalCode: '10115', city: 'Berlin', countryCode: 'DE' },
  products: [{ sku: 'WB', name: 'Wallbox', quantity: 1 }],
  documents: [{ type: 'protocol', files: [{ name: 'p.pdf', url: 'https://files.example.com/p.pdf' }] }],
  appointmentStart: '2026-12-01T07:00:00.000Z',
  appointmentEnd: '2026-12-01T10:00:00.000Z',
  startTimestamp: '2026-12-01T08:05:00.000Z',
  finishTimestamp: null,
};
const partnerCommon = {
  jobApiId: 'job-1',
  gidOrderNumber: 'O-1000000001',
  invoicingEid: 'INV-1',
  yourOrderID: 'P-77',
  status: 'appointment_confirmed',
  customer: defaultCommon.customer,
  shippingAddress: defaultCommon.shippingAddress,
  products: defaultCommon.products,
  appointmentStart: '2026-12-01T07:00:00.000Z',
  appointmentEnd: '2026-12-01T10:00:00.000Z',
};
const project = { projectId: 'PR-1', projectName: 'Fleet' };

const golden = {
  'default 1.0.0': { ...head('1.0.0'), ...defaultCommon },
  'default 1.1.0': { ...head('1.1.0'), ...defaultCommon, ...project },
  'default 1.3.0': { ...head('1.3.0'), ...defaultCommon, ...project, updatedAt: '2026-11-20T10:11:12.013Z' },
  'partner-format 1.0.0': { ...head('1.0.0'), ...partnerCommon },
  'partner-format 1.1.0': { ...head('1.1.0'), ...partnerCommon, ...project },
  'partner-format 1.3.0': {
    ...head('1.3.0'),
    ...partnerCommon,
    ...project,
    partnerId: 'partner-1',
    updatedAt: '2026-11-20T10:11:12.013Z',
  },
} as const;

for (const [key, expected] of Object.entries(golden)) {
  const [transformer, version] = key.split(' ') as ['default' | 'partner-format', '1.0.0' | '1.1.0' | '1.3.0'];
  test(`golden: ${key}`, () => {
    const payload = renderOrderStatus(full, { transformer, version }, 'e-1');
    assert.equal(payload, expected);
    // Key order is part of what integrators see on the wire.
    assert.equal(Object.keys(payload), Object.keys(expected));
  });
}

// CONTRACT §6, written out here on its own: every key each transformer and version must carry, whatever the job holds.
const CONTRACT_KEYS: Record<'default' | 'partner-format', Record<'1.0.0' | '1.1.0' | '1.3.0', string[]>> = (() => {
  const envelope = ['_eid', '_type', '_v'];
  const defaults = [
    'orderId',
    'orderNumber',
    'status',
    'externalId',
    'invoicingExternalId',
    'orderType',
    'customer',
    'customerBilling',
    'shippingAddress',
    'products',
    'documents',
    'appointmentStart',
    'appointmentEnd',
    'startTimestamp',
    'finishTimestamp',
  ];
  const partner = [
    'jobApiId',
    'gidOrderNumber',
    'invoicingEid',
    'yourOrderID',
    'status',
    'customer',
    'shippingAddress',
    'products',
    'appointmentStart',
    'appointmentEnd',
  ];
  const project = ['projectId', 'projectName'];
  return {
    default: {
      '1.0.0': [...envelope, ...defaults],
      '1.1.0': [...envelope, ...defaults, ...project],
      '1.3.0': [...envelope, ...defaults, ...project, 'updatedAt'],
    },
    'partner-format': {
      '1.0.0': [...envelope, ...partner],
      '1.1.0': [...envelope, ...partner, ...project],
      '1.3.0': [...envelope, ...partner, ...project, 'partnerId', 'updatedAt'],
    },
  };
})();
const NESTED_KEYS = {
  customer: ['email', 'externalId', 'firstName', 'lastName', 'mobilePhone', 'phone', 'salutation'],
  shippingAddress: ['street', 'houseNumber', 'postalCode', 'city', 'countryCode'],
  customerBilling: ['firstName', 'lastName', 'company', 'street', 'houseNumber', 'postalCode', 'city', 'countryCode'],
} as const;
const LISTS = ['products', 'documents'];
const sorted = (keys: readonly string[]) => [...keys].sort();

test('absent values are null and absent lists [], never missing: every key of CONTRACT §6, for each transformer and version', () => {
  const bare = new Job({
    ...full,
    partnerId: null,
    invoicingEid: null,
    eid: null,
    extPartnerId: null,
    customer: null,
    customerBilling: null,
    shippingAddress: null,
    products: [],
    documents: [],
    orderType: null,
    projectId: null,
    projectName: null,
    appointmentStart: null,
    appointmentEnd: null,
    startTimestamp: null,
  });
  // Nested objects present but empty: each of their keys must be there too, as null.
  const hollow = new Job({
    ...bare,
    customer: {} as never,
    customerBilling: {} as never,
    shippingAddress: {} as never,
  });
  for (const [transformer, versions] of Object.entries(CONTRACT_KEYS) as [
    keyof typeof CONTRACT_KEYS,
    Record<string, string[]>,
  ][]) {
    for (const [version, keys] of Object.entries(versions) as ['1.0.0' | '1.1.0' | '1.3.0', string[]][]) {
      const label = `${transformer} ${version}`;
      const payload = renderOrderStatus(bare, { transformer, version }, POLLED_EID);
      assert.equal(sorted(Object.keys(payload)), sorted(keys), `${label}: the keys`);
      for (const key of keys) {
        assert.ok(Object.hasOwn(payload, key) && payload[key] !== undefined, `${label}: ${key} is missing`);
        if (LISTS.includes(key)) assert.equal(payload[key], [], `${label}: ${key} is []`);
      }
      assert.equal([payload._eid, payload._type, payload._v], ['polled', 'OrderStatusEvent', version], label);
      for (const key of [
        'customer',
        'shippingAddress',
        'customerBilling',
        'invoicingEid',
        'yourOrderID',
        'externalId',
        'invoicingExternalId',
        'orderType',
        'appointmentStart',
        'appointmentEnd',
        'startTimestamp',
        'projectId',
        'projectName',
        'partnerId',
      ]) {
        if (keys.includes(key)) assert.is(payload[key], null, `${label}: ${key} is null`);
      }
      const nested = renderOrderStatus(hollow, { transformer, version }, POLLED_EID);
      for (const [key, members] of Object.entries(NESTED_KEYS)) {
        if (!keys.includes(key)) continue;
        assert.equal(
          nested[key],
          Object.fromEntries(members.map((m) => [m, null])),
          `${label}: ${key} with every member, as null`,
        );
      }
    }
  }
});

test('partial nested objects are completed with nulls', () => {
  const partial = new Job({ ...full, customer: { firstName: 'Bo' } as never, products: [{ sku: 'X' } as never] });
  const payload = renderOrderStatus(partial, { transformer: 'partner-format', version: '1.3.0' }, 'e');
  assert.equal(payload.customer, {
    email: null,
    externalId: null,
    firstName: 'Bo',
    lastName: null,
    mobilePhone: null,
    phone: null,
    salutation: null,
  });
  assert.equal(payload.products, [{ sku: 'X', name: null, quantity: null }]);
});

test.run();
