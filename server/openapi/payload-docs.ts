import { z } from 'zod';
import { COMMAND_ERROR_CODES, COMMAND_TYPES, type CommandType } from '../../domain/command.ts';
import { CUSTOMER_BILLING_KEYS, CUSTOMER_KEYS, JOB_STATUSES, SHIPPING_ADDRESS_KEYS } from '../../domain/job.ts';
import { PAYLOAD_VERSIONS } from '../../domain/webhook-config.ts';

// Documentation of the payloads the domain renders (domain/payloads.ts). The service does not validate its answers
// against it (the renderer is the single source, covered by golden tests, and checking 50 items a page costs ~10 %);
// the HTTP tests validate every answer they receive against it.
type Schema = Record<string, unknown>;
const str: Schema = { type: ['string', 'null'] };
const time: Schema = { type: ['string', 'null'], format: 'date-time' };
const closed = (properties: Record<string, Schema>, required: readonly string[], extra: Schema = {}): Schema =>
  ({ type: 'object', properties, required: [...required], additionalProperties: false, ...extra });
const nullableObject = (keys: readonly string[]): Schema =>
  ({ ...closed(Object.fromEntries(keys.map((k) => [k, str])), keys), type: ['object', 'null'] });
const customer = nullableObject(CUSTOMER_KEYS);
const shippingAddress = nullableObject(SHIPPING_ADDRESS_KEYS);
const products = { type: 'array', items: closed({ sku: str, name: str, quantity: { type: ['integer', 'null'], minimum: 0 } }, ['sku', 'name', 'quantity']) };
const documents = {
  type: 'array',
  items: closed({ type: str, files: { type: 'array', items: closed({ name: str, url: str }, ['name', 'url']) } }, ['type', 'files']),
};
const head = {
  _eid: { type: 'string', description: 'Event id; "polled" for orders served by polling.' },
  _type: { const: 'OrderStatusEvent' },
  _v: { enum: [...PAYLOAD_VERSIONS], description: 'Payload version of the receiving configuration.' },
};
const status = { enum: [...JOB_STATUSES] };
const since11 = { projectId: { ...str, description: 'from 1.1.0' }, projectName: { ...str, description: 'from 1.1.0' } };
const updatedAt = { ...time, description: 'from 1.3.0' };

const partnerFormat = closed({
  ...head, jobApiId: { type: 'string' }, gidOrderNumber: { type: 'string' }, invoicingEid: str, yourOrderID: str,
  status, customer, shippingAddress, products, appointmentStart: time, appointmentEnd: time,
  ...since11, partnerId: { ...str, description: 'from 1.3.0' }, updatedAt,
}, ['_eid', '_type', '_v', 'jobApiId', 'gidOrderNumber', 'invoicingEid', 'yourOrderID', 'status', 'customer', 'shippingAddress',
  'products', 'appointmentStart', 'appointmentEnd'], { title: 'partner-format' });

const defaultFormat = closed({
  ...head, orderId: { type: 'string' }, orderNumber: { type: 'string' }, status, externalId: str, invoicingExternalId: str,
  orderType: str, customer, customerBilling: nullableObject(CUSTOMER_BILLING_KEYS), shippingAddress, products, documents,
  appointmentStart: time, appointmentEnd: time, startTimestamp: time, finishTimestamp: time, ...since11, updatedAt,
}, ['_eid', '_type', '_v', 'orderId', 'orderNumber', 'status', 'externalId', 'invoicingExternalId', 'orderType', 'customer',
  'customerBilling', 'shippingAddress', 'products', 'documents', 'appointmentStart', 'appointmentEnd', 'startTimestamp',
  'finishTimestamp'], { title: 'default' });

/** One shape of an order, as a component of its own: generators name its type after it. */
const shape = (id: string, schema: Schema, description: string) =>
  z.custom<Record<string, unknown>>(() => true).meta({ id, override: { ...schema, description } });
const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

/** An order in the partner-format transformer's shape: what the paginated listing serves, and only it. */
export const partnerOrderStatusEvent = shape('PartnerOrderStatusEvent', partnerFormat,
  'One order in the partner-format transformer\'s shape and the configuration\'s version; a later version only adds fields. '
  + 'Absent values are null, absent lists [].');
/** An order in the default transformer's shape (brands, and partners configured with it). */
const defaultOrderStatusEvent = shape('DefaultOrderStatusEvent', defaultFormat,
  'One order in the default transformer\'s shape (brands\') and the configuration\'s version; a later version only adds fields. '
  + 'Absent values are null, absent lists [].');
/** What an endpoint test sends by default (CONTRACT §10): no answer carries it, so it is a component of its own. */
const webhookTestEvent = shape('WebhookTestEvent', closed({
  _eid: { type: 'string' }, _type: { const: 'WebhookTestEvent' }, _v: { enum: [...PAYLOAD_VERSIONS] }, sentAt: { type: 'string', format: 'date-time' },
}, ['_eid', '_type', '_v', 'sentAt'], { title: 'WebhookTestEvent' }), 'What POST /v3/webhook-config/test sends by default, signed as deliveries are, with `webhook-test: 1`.');
/** The shapes referred to by the others, or by descriptions only, which the document must carry as components. */
export const payloadShapes = [partnerOrderStatusEvent, defaultOrderStatusEvent, webhookTestEvent];

/**
 * Either shape. Both carry `_type: "OrderStatusEvent"` (CONTRACT §6), so no member tells them apart by value and no
 * discriminator can be given: the one each has alone (`jobApiId` or `orderId`, each required, no other members allowed)
 * is what selects it.
 */
export const orderStatusEvent = z.custom<Record<string, unknown>>(() => true).meta({
  id: 'OrderStatusEvent',
  override: <Schema>{
    description: 'One order, in the shape of the receiving configuration\'s transformer (partner-format for partners, default '
      + 'for brands) and version: PartnerOrderStatusEvent has jobApiId, DefaultOrderStatusEvent has orderId.',
    oneOf: [ref('PartnerOrderStatusEvent'), ref('DefaultOrderStatusEvent')],
  },
});

const commandHead = {
  _eid: { type: 'string' },
  _v: { enum: [...PAYLOAD_VERSIONS], description: 'Payload version of the receiving configuration (1.3.0 without one).' },
  _cid: { type: 'string' },
  commandType: { enum: [...COMMAND_TYPES], description: 'The `_type` of the command this is the outcome of.' },
  _metadata: { type: 'object', additionalProperties: { type: 'string' }, description: 'As sent with the command; {} when none was.' },
};
const COMMAND_HEAD = ['_eid', '_type', '_v', '_cid', 'commandType', '_metadata'] as const;
// One schema per shape of `result`, each naming the commands that answer it: a generated client tells them apart by
// `commandType` (CONTRACT §5: { orderIds } for CreateOrderFromMapping, { invoiceId } for RefreshInvoice, { orderId }
// otherwise).
const RESULTS: readonly [title: string, types: readonly CommandType[], result: Schema][] = [
  ['CommandResultEvent of an order command',
    COMMAND_TYPES.filter((t) => t !== 'RefreshInvoice' && t !== 'CreateOrderFromMapping'),
    closed({ orderId: { type: 'string' } }, ['orderId'])],
  ['CommandResultEvent of RefreshInvoice', ['RefreshInvoice'], closed({ invoiceId: { type: 'string' } }, ['invoiceId'])],
  ['CommandResultEvent of CreateOrderFromMapping', ['CreateOrderFromMapping'],
    closed({ orderIds: { type: 'array', items: { type: 'string' }, description: 'In the order of the command\'s `orders`.' } },
      ['orderIds'])],
];
const commandResult: Schema = {
  title: 'CommandResultEvent',
  oneOf: RESULTS.map(([title, types, result]) => closed({
    ...commandHead, _type: { const: 'CommandResultEvent' }, commandType: { enum: [...types] }, result,
  }, [...COMMAND_HEAD, 'result'], { title })),
};
const commandError = closed({
  ...commandHead, _type: { const: 'CommandErrorEvent' },
  code: { enum: [...COMMAND_ERROR_CODES] },
  message: { type: 'string' },
  details: {
    type: ['array', 'null'],
    items: closed({ key: { type: 'string' }, message: { type: 'string' } }, ['key', 'message']),
    description: 'Every problem found, e.g. { key: "orders[2].city", message } for MAPPING_INVALID; null when there is no detail.',
  },
}, [...COMMAND_HEAD, 'code', 'message', 'details'], { title: 'CommandErrorEvent' });

export const commandOutcomeEvent = z.custom<Record<string, unknown>>(() => true).meta({
  id: 'CommandOutcomeEvent',
  override: <Schema>{
    description: 'How a command ended, as delivered to the sender\'s endpoint and kept for polling for 24 hours.',
    oneOf: [commandResult, commandError],
  },
});

const invoiceEvent = closed({
  _eid: { type: 'string' }, _type: { const: 'InvoiceEvent' }, _v: { enum: [...PAYLOAD_VERSIONS] },
  invoiceId: { type: 'string' }, orderId: { type: 'string' }, number: { type: 'string' }, type: { type: 'string' }, status: { type: 'string' },
  cancellationStatus: str,
  items: { type: 'array', items: closed({ description: { type: 'string' }, quantity: { type: 'number' }, unitPrice: { type: 'number' }, total: { type: 'number' } },
    ['description', 'quantity', 'unitPrice', 'total']) },
}, ['_eid', '_type', '_v', 'invoiceId', 'orderId', 'number', 'type', 'status', 'cancellationStatus', 'items'], { title: 'InvoiceEvent' });

/** Any event an endpoint receives, exactly as delivered (the event feed's items). */
export const deliveredEvent = z.custom<Record<string, unknown>>(() => true).meta({
  id: 'DeliveredEvent',
  override: <Schema>{
    description: 'An event exactly as it was (or would have been) delivered to your endpoint, in its configuration\'s shape and version.',
    oneOf: [ref('PartnerOrderStatusEvent'), ref('DefaultOrderStatusEvent'), invoiceEvent, commandResult, commandError],
  },
});
