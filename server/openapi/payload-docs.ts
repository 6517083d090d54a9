import { z } from 'zod';
import { COMMAND_ERROR_CODES, COMMAND_TYPES, type CommandType } from '../../domain/command.ts';
import { PAYLOAD_VERSIONS } from '../../domain/webhook-config.ts';
import { closed, ref, type Schema, str } from './payload-schema.ts';

// Documentation of the payloads the domain renders (domain/payloads.ts). The service does not validate its answers
// against it (the renderer is the single source, covered by golden tests, and checking 50 items a page costs ~10 %);
// the HTTP tests validate every answer they receive against it.
export { orderStatusEvent, partnerOrderStatusEvent, payloadShapes } from './payload-shapes.ts';

const commandHead = {
  _eid: { type: 'string' },
  _v: {
    enum: [...PAYLOAD_VERSIONS],
    description: 'Payload version of the receiving configuration (1.3.0 without one).',
  },
  _cid: { type: 'string' },
  commandType: { enum: [...COMMAND_TYPES], description: 'The `_type` of the command this is the outcome of.' },
  _metadata: {
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'As sent with the command; {} when none was.',
  },
};
const COMMAND_HEAD = ['_eid', '_type', '_v', '_cid', 'commandType', '_metadata'] as const;
// One schema per shape of `result`, each naming the commands that answer it: a generated client tells them apart by
// `commandType` (CONTRACT §5: { orderIds } for CreateOrderFromMapping, { invoiceId } for RefreshInvoice, { orderId }
// otherwise).
const RESULTS: readonly [title: string, types: readonly CommandType[], result: Schema][] = [
  [
    'CommandResultEvent of an order command',
    COMMAND_TYPES.filter((t) => t !== 'RefreshInvoice' && t !== 'CreateOrderFromMapping'),
    closed({ orderId: { type: 'string' } }, ['orderId']),
  ],
  [
    'CommandResultEvent of RefreshInvoice',
    ['RefreshInvoice'],
    closed({ invoiceId: { type: 'string' } }, ['invoiceId']),
  ],
  [
    'CommandResultEvent of CreateOrderFromMapping',
    ['CreateOrderFromMapping'],
    closed(
      {
        orderIds: { type: 'array', items: { type: 'string' }, description: "In the order of the command's `orders`." },
      },
      ['orderIds'],
    ),
  ],
];
const commandResult: Schema = {
  title: 'CommandResultEvent',
  oneOf: RESULTS.map(([title, types, result]) =>
    closed(
      {
        ...commandHead,
        _type: { const: 'CommandResultEvent' },
        commandType: { enum: [...types] },
        result,
      },
      [...COMMAND_HEAD, 'result'],
      { title },
    ),
  ),
};
const commandError = closed(
  {
    ...commandHead,
    _type: { const: 'CommandErrorEvent' },
    code: { enum: [...COMMAND_ERROR_CODES] },
    message: { type: 'string' },
    details: {
      type: ['array', 'null'],
      items: closed({ key: { type: 'string' }, message: { type: 'string' } }, ['key', 'message']),
      description:
        'Every problem found, e.g. { key: "orders[2].city", message } for MAPPING_INVALID; null when there is no detail.',
    },
  },
  [...COMMAND_HEAD, 'code', 'message', 'details'],
  { title: 'CommandErrorEvent' },
);

export const commandOutcomeEvent = z
  .custom<Record<string, unknown>>(() => true)
  .meta({
    id: 'CommandOutcomeEvent',
    override: <Schema>{
      description: "How a command ended, as delivered to the sender's endpoint and kept for polling for 24 hours.",
      oneOf: [commandResult, commandError],
    },
  });

const invoiceEvent = closed(
  {
    _eid: { type: 'string' },
    _type: { const: 'InvoiceEvent' },
    _v: { enum: [...PAYLOAD_VERSIONS] },
    invoiceId: { type: 'string' },
    orderId: { type: 'string' },
    number: { type: 'string' },
    type: { type: 'string' },
    status: { type: 'string' },
    cancellationStatus: str,
    items: {
      type: 'array',
      items: closed(
        {
          description: { type: 'string' },
          quantity: { type: 'number' },
          unitPrice: { type: 'number' },
          total: { type: 'number' },
        },
        ['description', 'quantity', 'unitPrice', 'total'],
      ),
    },
  },
  ['_eid', '_type', '_v', 'invoiceId', 'orderId', 'number', 'type', 'status', 'cancellationStatus', 'items'],
  { title: 'InvoiceEvent' },
);

/** Any event an endpoint receives, exactly as delivered (the event feed's items). */
export const deliveredEvent = z
  .custom<Record<string, unknown>>(() => true)
  .meta({
    id: 'DeliveredEvent',
    override: <Schema>{
      description:
        "An event exactly as it was (or would have been) delivered to your endpoint, in its configuration's shape and version.",
      oneOf: [
        ref('PartnerOrderStatusEvent'),
        ref('DefaultOrderStatusEvent'),
        invoiceEvent,
        commandResult,
        commandError,
      ],
    },
  });
