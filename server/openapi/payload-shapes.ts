// The payload shapes documented as components of their own (server/openapi/payload-docs.ts): an order in each
// transformer's shape, the endpoint test's event, and an order as either shape.
import { z } from 'zod';
import { CUSTOMER_BILLING_KEYS, CUSTOMER_KEYS, JOB_STATUSES, SHIPPING_ADDRESS_KEYS } from '../../domain/job.ts';
import { PAYLOAD_VERSIONS } from '../../domain/webhook-config.ts';
import { closed, ref, type Schema, str, time } from './payload-schema.ts';

const nullableObject = (keys: readonly string[]): Schema => ({
  ...closed(Object.fromEntries(keys.map((k) => [k, str])), keys),
  type: ['object', 'null'],
});
const customer = nullableObject(CUSTOMER_KEYS);
const shippingAddress = nullableObject(SHIPPING_ADDRESS_KEYS);
const products = {
  type: 'array',
  items: closed({ sku: str, name: str, quantity: { type: ['integer', 'null'], minimum: 0 } }, [
    'sku',
    'name',
    'quantity',
  ]),
};
const documents = {
  type: 'array',
  items: closed({ type: str, files: { type: 'array', items: closed({ name: str, url: str }, ['name', 'url']) } }, [
    'type',
    'files',
  ]),
};
const head = {
  _eid: { type: 'string', description: 'Event id; "polled" for orders served by polling.' },
  _type: { const: 'OrderStatusEvent' },
  _v: { enum: [...PAYLOAD_VERSIONS], description: 'Payload version of the receiving configuration.' },
};
const status = { enum: [...JOB_STATUSES] };
const since11 = {
  projectId: { ...str, description: 'from 1.1.0' },
  projectName: { ...str, description: 'from 1.1.0' },
};
const updatedAt = { ...time, description: 'from 1.3.0' };

const partnerFormat = closed(
  {
    ...head,
    jobApiId: { type: 'string' },
    gidOrderNumber: { type: 'string' },
    invoicingEid: str,
    yourOrderID: str,
    status,
    customer,
    shippingAddress,
    products,
    appointmentStart: time,
    appointmentEnd: time,
    ...since11,
    partnerId: { ...str, description: 'from 1.3.0' },
    updatedAt,
  },
  [
    '_eid',
    '_type',
    '_v',
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
  ],
  { title: 'partner-format' },
);

const defaultFormat = closed(
  {
    ...head,
    orderId: { type: 'string' },
    orderNumber: { type: 'string' },
    status,
    externalId: str,
    invoicingExternalId: str,
    orderType: str,
    customer,
    customerBilling: nullableObject(CUSTOMER_BILLING_KEYS),
    shippingAddress,
    products,
    documents,
    appointmentStart: time,
    appointmentEnd: time,
    startTimestamp: time,
    finishTimestamp: time,
    ...since11,
    updatedAt,
  },
  [
    '_eid',
    '_type',
    '_v',
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
  ],
  { title: 'default' },
);

/** One shape of an order, as a component of its own: generators name its type after it. */
const shape = (id: string, schema: Schema, description: string) =>
  z.custom<Record<string, unknown>>(() => true).meta({ id, override: { ...schema, description } });

/** An order in the partner-format transformer's shape: what the paginated listing serves, and only it. */
export const partnerOrderStatusEvent = shape(
  'PartnerOrderStatusEvent',
  partnerFormat,
  "One order in the partner-format transformer's shape and the configuration's version; a later version only adds fields. " +
    'Absent values are null, absent lists [].',
);
/** An order in the default transformer's shape (brands, and partners configured with it). */
const defaultOrderStatusEvent = shape(
  'DefaultOrderStatusEvent',
  defaultFormat,
  "One order in the default transformer's shape (brands') and the configuration's version; a later version only adds fields. " +
    'Absent values are null, absent lists [].',
);
/** What an endpoint test sends by default (CONTRACT §10): no answer carries it, so it is a component of its own. */
const webhookTestEvent = shape(
  'WebhookTestEvent',
  closed(
    {
      _eid: { type: 'string' },
      _type: { const: 'WebhookTestEvent' },
      _v: { enum: [...PAYLOAD_VERSIONS] },
      sentAt: { type: 'string', format: 'date-time' },
    },
    ['_eid', '_type', '_v', 'sentAt'],
    { title: 'WebhookTestEvent' },
  ),
  'What POST /v3/webhook-config/test sends by default, signed as deliveries are, with `webhook-test: 1`.',
);
/** The shapes referred to by the others, or by descriptions only, which the document must carry as components. */
export const payloadShapes = [partnerOrderStatusEvent, defaultOrderStatusEvent, webhookTestEvent];

/**
 * Either shape. Both carry `_type: "OrderStatusEvent"` (CONTRACT §6), so no member tells them apart by value and no
 * discriminator can be given: the one each has alone (`jobApiId` or `orderId`, each required, no other members allowed)
 * is what selects it.
 */
export const orderStatusEvent = z
  .custom<Record<string, unknown>>(() => true)
  .meta({
    id: 'OrderStatusEvent',
    override: <Schema>{
      description:
        "One order, in the shape of the receiving configuration's transformer (partner-format for partners, default " +
        'for brands) and version: PartnerOrderStatusEvent has jobApiId, DefaultOrderStatusEvent has orderId.',
      oneOf: [ref('PartnerOrderStatusEvent'), ref('DefaultOrderStatusEvent')],
    },
  });
