import { LOGIN_STATUS_MESSAGE } from '../../domain/auth.ts';
import { Job } from '../../domain/job.ts';
import { POLLED_EID, renderOrderStatus } from '../../domain/payloads.ts';

// Examples of the API reference, keyed by operationId. They name the demo data (SEED_DEMO=1), so that "Try it out" on
// /docs works as shown; the orders are rendered by the domain's own renderer, so they cannot drift from real answers.
const demoOrder = new Job({
  apiId: 'demo-job-04',
  brandAccountId: '00000000-0000-4000-8000-000000000001',
  partnerId: '00000000-0000-4000-8000-000000000002',
  name: 'O-1000000004',
  status: 'appointment_confirmed',
  invoicingEid: 'INV-1004',
  eid: null,
  extPartnerId: 'INST-4711',
  customer: {
    email: 'customer4@demo.example',
    externalId: 'C-4',
    firstName: 'Alex',
    lastName: 'Sample 4',
    mobilePhone: null,
    phone: '+49 30 1234567',
    salutation: null,
  },
  customerBilling: null,
  shippingAddress: { street: 'Hauptstraße', houseNumber: '4', postalCode: '10115', city: 'Berlin', countryCode: 'DE' },
  products: [{ sku: 'WB-11KW', name: 'Wallbox 11 kW', quantity: 1 }],
  documents: [],
  orderType: 'installation',
  projectId: null,
  projectName: null,
  appointmentStart: new Date('2026-12-01T08:00:00.000Z'),
  appointmentEnd: new Date('2026-12-01T10:00:00.000Z'),
  startTimestamp: null,
  finishTimestamp: null,
  createdAt: new Date('2026-11-20T08:00:00.000Z'),
  updatedAt: new Date('2026-11-23T09:30:00.000Z'),
});
const partnerOrder = (eid: string) =>
  renderOrderStatus(demoOrder, { transformer: 'partner-format', version: '1.3.0' }, eid);
const brandOrder = renderOrderStatus(demoOrder, { transformer: 'default', version: '1.3.0' }, POLLED_EID);

const appointment = {
  _v: '1.0.0',
  _cid: 'appt-demo-job-04-0001',
  _type: 'SetJobAppointment',
  _metadata: { 'ext-ticket': 'T-1042' },
  jobApiId: 'demo-job-04',
  appointmentStart: '2026-12-01T09:00:00+01:00',
  appointmentEnd: '2026-12-01T11:00:00+01:00',
};
const yourOrderId = {
  _v: '1.0.0',
  _cid: 'your-id-demo-job-04-0001',
  _type: 'SetJobYourOrderId',
  _metadata: { 'ext-ticket': 'T-1043' },
  jobApiId: 'demo-job-04',
  yourOrderID: 'INST-4711',
};
const config = {
  scope: 'partner',
  url: 'https://hooks.example.com/partner',
  transformer: 'partner-format',
  version: '1.3.0',
  enabled: true,
  hasSignatureKey: true,
  previousKeyExpiresAt: null,
  failingSince: null,
  disabledReason: null,
  asymmetricSigning: true,
  publicKey: 'whpk_3q1cXGv5JtPzp1HLwQzJ7m2cT8Zs0y6b3oM2t9iKdqU=',
  previousPublicKey: null,
};

const command = (type: string, cid: string, fields: Record<string, unknown>) => ({
  _v: '1.0.0',
  _cid: cid,
  _type: type,
  _metadata: { 'ext-ticket': 'T-2001' },
  ...fields,
});
const brandCommands = {
  ApplyCancellation: command('ApplyCancellation', 'cancel-demo-job-07-0001', {
    orderId: 'demo-job-07',
    cancellationReason: 'CUSTOMER_WITHDREW',
  }),
  RefreshOrder: command('RefreshOrder', 'refresh-demo-job-05-0001', { orderId: 'demo-job-05' }),
  RefreshInvoice: command('RefreshInvoice', 'refresh-invoice-0001', {
    invoiceId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  }),
  UpdateCustomer: command('UpdateCustomer', 'customer-demo-job-05-0001', {
    orderId: 'demo-job-05',
    customer: { phone: '+49 30 7654321', email: 'alex@demo.example' },
  }),
  UpdateOrderExternalId: command('UpdateOrderExternalId', 'eid-demo-job-05-0001', {
    orderId: 'demo-job-05',
    externalId: 'SHOP-88231',
  }),
  UpdateOrderInvoicingExternalId: command('UpdateOrderInvoicingExternalId', 'inv-eid-demo-job-05-0001', {
    orderId: 'demo-job-05',
    invoicingExternalId: 'INV-2026-0042',
  }),
  CreateOrderFromMapping: command('CreateOrderFromMapping', 'create-orders-0001', {
    orders: [
      {
        mapping: [
          { key: 'first_name', value: 'Alex' },
          { key: 'last_name', value: 'Sample' },
          { key: 'city', value: 'Berlin' },
          { key: 'wallbox_sku', value: 'WB-11KW' },
          { key: 'wallbox_qty', value: '1' },
        ],
      },
    ],
  }),
};

export const OPERATION_EXAMPLES: Record<
  string,
  { request?: unknown; requests?: Record<string, { summary: string; value: unknown }>; response?: unknown }
> = {
  'commands-send': {
    requests: Object.fromEntries(
      Object.entries(brandCommands).map(([type, value]) => [type, { summary: type, value }]),
    ),
    response: { _cid: brandCommands.ApplyCancellation._cid, _type: 'ApplyCancellation', status: 'accepted' },
  },
  'commands-result': {
    response: {
      _eid: '2f1d3c4b-5a69-4788-9a0b-1c2d3e4f5a6b',
      _type: 'CommandResultEvent',
      _v: '1.3.0',
      _cid: brandCommands.ApplyCancellation._cid,
      commandType: 'ApplyCancellation',
      _metadata: { 'ext-ticket': 'T-2001' },
      result: { orderId: 'demo-job-07' },
    },
  },
  'me-get': {
    response: {
      role: 'partner',
      account: { id: 'b98e45be-911a-49af-9678-c76546bebc50', name: 'Installer East', parentId: null },
      contact: { id: '3e1ce1ba-600c-4885-805a-fa9bce5b168b', email: 'dispatch@installer-east.example' },
    },
  },
  'auth-login': { request: { email: 'master@demo.example' }, response: { status: LOGIN_STATUS_MESSAGE } },
  'auth-accessToken': {
    request: { expires_after: 3600 },
    response: {
      access_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiIuLi4ifQ.c2lnbmF0dXJl',
      token_type: 'Bearer',
      expires_in: 3600,
    },
  },
  'partnerOrders-paginated': { response: { items: [partnerOrder(POLLED_EID)], page: 1, pageSize: 50, total: 1 } },
  'partnerOrders-legacy': { response: [partnerOrder(POLLED_EID)] },
  'partnerOrders-poll': { response: brandOrder },
  'partnerCommands-setJobAppointment': {
    request: appointment,
    response: {
      _cid: appointment._cid,
      _type: appointment._type,
      status: 'succeeded',
      order: partnerOrder('7d0f4c9e-5a57-4b8e-9d43-2f1c8b0e6a11'),
    },
  },
  'partnerCommands-setJobYourOrderId': {
    request: yourOrderId,
    response: {
      _cid: yourOrderId._cid,
      _type: yourOrderId._type,
      status: 'succeeded',
      order: partnerOrder('0b6f7e52-8c3d-4f21-a9e4-5d7c1b2a3e90'),
    },
  },
  'events-feed': {
    response: {
      items: [
        partnerOrder('5b2e8f1a-9c4d-4e7b-8a16-3f0d2c9e7b41'),
        {
          _eid: '2f1d3c4b-5a69-4788-9a0b-1c2d3e4f5a6b',
          _type: 'CommandResultEvent',
          _v: '1.3.0',
          _cid: appointment._cid,
          commandType: 'SetJobAppointment',
          _metadata: { 'ext-ticket': 'T-1042' },
          result: { orderId: 'demo-job-04' },
        },
      ],
      next: 'WzQyLDE3OTU0MzAwMDAwMDBd',
    },
  },
  'webhookDeliveries-list': {
    response: {
      items: [
        {
          id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
          eventId: '5b2e8f1a-9c4d-4e7b-8a16-3f0d2c9e7b41',
          eventType: 'OrderStatusEvent',
          orderId: 'WB-2026-0042',
          url: config.url,
          status: 'failed',
          createdAt: '2026-11-23T09:30:00.000Z',
          nextAttemptAt: null,
          attempts: [
            { at: '2026-11-23T09:30:00.012Z', statusCode: 503, durationMs: 41, error: 'HTTP 503: Service Unavailable' },
            { at: '2026-11-23T09:31:00.015Z', statusCode: null, durationMs: 10000, error: 'timeout after 10000 ms' },
          ],
        },
      ],
      next: null,
    },
  },
  'webhookDeliveries-redeliver': { response: { id: '7c9e6679-7425-40de-944b-e07fc1f90ae7', status: 'pending' } },
  'webhookDeliveries-stats': {
    response: {
      bucket: 'hour',
      items: [
        { start: '2026-11-23T08:00:00.000Z', attempts: 0, succeeded: 0, failed: 0, p50Ms: null, p99Ms: null },
        { start: '2026-11-23T09:00:00.000Z', attempts: 14, succeeded: 12, failed: 2, p50Ms: 87, p99Ms: 10003 },
      ],
    },
  },
  'webhookDeliveries-redeliverFailed': { request: { since: '2026-11-23T00:00:00Z' }, response: { count: 12 } },
  'webhookConfig-test': {
    request: { eventType: 'OrderStatusEvent' },
    response: { delivered: true, statusCode: 200, durationMs: 87, error: null },
  },
  'webhookDeliveries-get': {
    response: {
      id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      eventId: '5b2e8f1a-9c4d-4e7b-8a16-3f0d2c9e7b41',
      eventType: 'OrderStatusEvent',
      orderId: 'WB-2026-0042',
      url: config.url,
      status: 'pending',
      createdAt: '2026-11-23T09:30:00.000Z',
      nextAttemptAt: '2026-11-23T09:35:00.012Z',
      payload: JSON.stringify(partnerOrder('5b2e8f1a-9c4d-4e7b-8a16-3f0d2c9e7b41')),
      attempts: [
        {
          at: '2026-11-23T09:30:00.012Z',
          statusCode: 503,
          durationMs: 41,
          error: 'HTTP 503: Service Unavailable',
          request: {
            url: config.url,
            headers: {
              'content-type': 'application/json',
              'user-agent': 'partner-brand-api-webhooks/1',
              'webhook-id': '5b2e8f1a-9c4d-4e7b-8a16-3f0d2c9e7b41',
              'webhook-timestamp': '1795426200',
              'x-webhook-signature': '9f2c6d0e8a4b1c3d5e7f9a0b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d',
              'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
            },
          },
          response: { headers: { 'content-type': 'text/plain', 'retry-after': '120' }, body: 'Service Unavailable' },
        },
      ],
    },
  },
  'webhookConfig-get': { response: { ...config, failingSince: '2026-11-23T09:30:00.012Z' } },
  'webhookConfig-rotateKey': {
    request: { previousKeyValidFor: 86400 },
    response: {
      ...config,
      previousKeyExpiresAt: '2026-11-24T09:30:00.000Z',
      signatureKey: 'whsec_Hq2mJzQ9y8V0cYb1l7sNw4xKp3Tf6RuA5dEgLhBiC0o=',
    },
  },
  'webhookConfig-put': {
    request: {
      url: config.url,
      transformer: config.transformer,
      version: config.version,
      enabled: true,
      signatureKey: 'a-long-random-signing-key',
      asymmetricSigning: true,
    },
    response: config,
  },
};
