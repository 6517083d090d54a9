import { z } from 'zod';
import { reference, wireString } from './wire-text.ts';
import { ROLES } from '../domain/account.ts';
import { ACCESS_TOKEN_LIFETIME } from '../domain/auth.ts';
import { CANCELLATION_OUTCOMES } from '../domain/cancellation.ts';
import { CANCELLATION_STATUSES, INVOICE_STATUSES, INVOICE_TYPES } from '../domain/invoice.ts';
import { BRAND_COMMAND_TYPES, type BrandCommand, type BrandCommandType, type JobIdentifier } from '../domain/command.ts';
import { DELIVERY_STATUSES } from '../domain/delivery.ts';
import { JOB_STATUSES } from '../domain/job.ts';
import { DELIVERY_LIST_LIMIT } from '../domain/use-cases/list-deliveries.ts';
import type { AcceptedAnswer } from '../domain/use-cases/accept-command.ts';
import type { SetJobAppointmentCommand } from '../domain/use-cases/set-job-appointment.ts';
import type { SetJobYourOrderIdCommand } from '../domain/use-cases/set-job-your-order-id.ts';
import { PAYLOAD_VERSIONS, SCOPES, SIGNATURE_KEY_MIN_LENGTH, TRANSFORMERS } from '../domain/webhook-config.ts';
import { deliveryCursor, feedCursor } from './cursors.ts';
import { commandOutcomeEvent, deliveredEvent, orderStatusEvent } from './payload-docs.ts';
import { FEED_LIMIT } from '../domain/use-cases/read-event-feed.ts';
import { OWN_DELIVERY_LIMIT } from '../domain/use-cases/own-deliveries.ts';

// The wire contract, defined once. Everything is checked here; the domain receives plain values.

// Ids are references like any other: one of another shape names nothing, and is answered as not found (CONTRACT §3).
const id = reference();
const text = (max = 200) => wireString().trim().min(1).max(max);
const optionalText = (max = 200) => wireString().max(max).nullable().optional();

/** ISO 8601 with a time and an offset (`Z` or ±hh:mm), as a Date (CONTRACT §5). */
export const dateTime = z.iso.datetime({ offset: true }).transform((value) => new Date(value));

const customer = z.strictObject({
  email: optionalText(254), externalId: optionalText(), firstName: optionalText(), lastName: optionalText(),
  mobilePhone: optionalText(50), phone: optionalText(50), salutation: optionalText(50),
});
const customerBilling = z.strictObject({
  firstName: optionalText(), lastName: optionalText(), company: optionalText(), street: optionalText(),
  houseNumber: optionalText(20), postalCode: optionalText(20), city: optionalText(), countryCode: optionalText(2),
});
const shippingAddress = z.strictObject({
  street: optionalText(), houseNumber: optionalText(20), postalCode: optionalText(20), city: optionalText(),
  countryCode: optionalText(2),
});
const product = z.strictObject({ sku: optionalText(), name: optionalText(), quantity: z.number().int().min(0).nullable().optional() });
const documentFile = z.strictObject({ name: optionalText(), url: optionalText(2000) });
const document = z.strictObject({ type: optionalText(), files: z.array(documentFile).max(50).default([]) });

/** Completes a nested object so that every key of its shape is present, absent ones as null. */
const complete = <S extends z.ZodRawShape>(shape: z.ZodObject<S>) =>
  shape.transform((value) => Object.fromEntries(Object.keys(shape.shape).map((k) => [k, (value as Record<string, unknown>)[k] ?? null])) as
    { [K in keyof z.output<z.ZodObject<S>>]-?: Exclude<z.output<z.ZodObject<S>>[K], undefined> | null });

export const admin = {
  createAccount: z.strictObject({ name: text(), role: z.enum(ROLES), parentId: id.nullable().optional() }),
  createContact: z.strictObject({ accountId: id, email: wireString().trim().max(254), apiAccess: z.boolean().optional() }),
  setApiAccess: z.strictObject({ contactId: id, apiAccess: z.boolean() }),
  upsertWebhookConfig: z.strictObject({
    accountId: id,
    scope: z.enum(SCOPES),
    url: wireString().max(2000).nullable().optional(),
    transformer: z.enum(TRANSFORMERS),
    version: z.enum(PAYLOAD_VERSIONS),
    signatureKey: wireString().max(256).nullable().optional(),
    enabled: z.boolean().optional(),
  }),
  createJob: z.strictObject({
    brandAccountId: id,
    partnerId: id.nullable().optional(),
    apiId: text(100).optional(),
    name: text(100).optional(),
    status: z.enum(JOB_STATUSES).optional(),
    invoicingEid: optionalText(), eid: optionalText(), extPartnerId: optionalText(),
    customer: complete(customer).nullable().optional(),
    customerBilling: complete(customerBilling).nullable().optional(),
    shippingAddress: complete(shippingAddress).nullable().optional(),
    products: z.array(complete(product)).max(100).optional(),
    documents: z.array(document.transform((d) => ({ type: d.type ?? null, files: d.files.map((f) => ({ name: f.name ?? null, url: f.url ?? null })) }))).max(50).optional(),
    orderType: optionalText(), projectId: optionalText(), projectName: optionalText(),
    startTimestamp: dateTime.nullable().optional(),
    finishTimestamp: dateTime.nullable().optional(),
    updatedAt: dateTime.optional(),
  }),
  assignJob: z.strictObject({ apiId: text(100), partnerId: id }),
  setJobStatus: z.strictObject({ apiId: text(100), status: z.enum(JOB_STATUSES) }),
  createInvoice: z.strictObject({
    orderId: text(100),
    number: text(100),
    type: z.enum(INVOICE_TYPES),
    status: z.enum(INVOICE_STATUSES),
    cancellationStatus: z.enum(CANCELLATION_STATUSES).nullable().optional(),
    items: z.array(z.strictObject({
      description: text(500), quantity: z.number().finite(), unitPrice: z.number().finite(), total: z.number().finite(),
    })).max(500),
  }),
  upsertCancellationReason: z.strictObject({ name: text(64), outcome: z.enum(CANCELLATION_OUTCOMES) }),
  upsertOrderMapping: z.strictObject({
    brandAccountId: id,
    fields: z.array(z.strictObject({ key: text(100), target: text(100), required: z.boolean().default(false) })).min(1).max(500),
  }),
  advanceClock: z.strictObject({ seconds: z.number().int().min(1).max(10 * 365 * 86_400) }),
  listDeliveries: z.strictObject({
    accountId: id.optional(),
    status: z.enum(DELIVERY_STATUSES).optional(),
    limit: z.number().int().min(1).max(DELIVERY_LIST_LIMIT.max).optional(),
  }).optional(),
  redeliver: z.strictObject({ deliveryId: id }),
  redeliverFailed: z.strictObject({ accountId: id, since: dateTime }),
  getCommand: z.strictObject({ accountId: id, cid: reference() }),
};

/**
 * A body field that must arrive as a JSON number or boolean. trpc-to-openapi switches on zod's `coerce` for
 * plain number and boolean fields of every REST input, which would take "60" for 60 and "false" for true;
 * it leaves pipes alone, and the documented type stays the left-hand side's.
 */
const exactNumber = (schema: z.ZodNumber) => schema.pipe(z.number());
const exactBoolean = () => z.boolean().pipe(z.boolean());

export const auth = {
  login: z.strictObject({ email: wireString().max(254).describe('The e-mail address of a contact with API access.') }),
  loginAnswer: z.object({ status: z.string() }),
  // A POST without a body is the same as {} (CONTRACT §4): the body is optional.
  accessToken: z.strictObject({
    expires_after: exactNumber(z.number().int().min(ACCESS_TOKEN_LIFETIME.min).max(ACCESS_TOKEN_LIFETIME.max))
      .optional()
      .describe(`Lifetime of the access token in seconds (${ACCESS_TOKEN_LIFETIME.min}–${ACCESS_TOKEN_LIFETIME.max}, default ${ACCESS_TOKEN_LIFETIME.default}).`),
  }).optional(),
  accessTokenAnswer: z.object({ access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.number().int() }),
};

export const webhookConfig = {
  view: z.object({
    scope: z.enum(SCOPES),
    url: z.string().nullable(),
    transformer: z.enum(TRANSFORMERS),
    version: z.enum(PAYLOAD_VERSIONS),
    enabled: z.boolean(),
    hasSignatureKey: z.boolean(),
  }),
  put: z.strictObject({
    url: wireString().max(2000).describe('http(s) URL that receives the events; private addresses are refused.'),
    transformer: z.enum(TRANSFORMERS),
    version: z.enum(PAYLOAD_VERSIONS),
    enabled: exactBoolean().optional().describe('Defaults to true.'),
    signatureKey: wireString().min(SIGNATURE_KEY_MIN_LENGTH).max(256).nullable().optional()
      .describe('HMAC key for signatures. Absent keeps the current key; null removes it. Never shown again.'),
  }),
};

/** A whole number in a query string, strictly: digits only, no coercion of "1.5", "1e3" or " 2". */
const queryInt = (min: number, description: string) =>
  z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(min).max(Number.MAX_SAFE_INTEGER))
    .meta({ description, override: { type: 'integer', minimum: min, pattern: undefined } });
const queryBool = z.enum(['true', '1', 'false', '0']).transform((v) => v === 'true' || v === '1');
const orderFilters = {
  updatedSince: z.iso.datetime({ offset: true }).transform((v) => new Date(v))
    .meta({ description: 'Only orders with updatedAt >= updatedSince; ISO 8601 with an offset.', examples: ['2026-11-01T00:00:00Z'] }).optional(),
  active: queryBool.meta({ description: 'true or 1 leaves out orders that need no partner action (new, cancelled, closed, completed, invoice sent).' }).optional(),
};

/** A whole number in a query string within bounds: beyond them is a 400 that names them. */
const boundedQueryInt = (min: number, max: number, description: string) =>
  z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(min).max(max))
    .meta({ description, override: { type: 'integer', minimum: min, maximum: max, pattern: undefined } });

const attempt = z.object({
  at: z.string().describe('When the try was made (ISO 8601, UTC).'),
  statusCode: z.number().int().nullable().describe('Null when no answer came (refused target, connection error, timeout).'),
  durationMs: z.number().int(),
  error: z.string().nullable().describe('The error, or the start of a non-2xx answer.'),
});

export const selfService = {
  feed: z.object({
    after: feedCursor.optional(),
    limit: boundedQueryInt(1, FEED_LIMIT.max, `1…${FEED_LIMIT.max}, default ${FEED_LIMIT.default}.`).optional(),
  }),
  feedAnswer: z.object({
    items: z.array(deliveredEvent),
    next: z.string().nullable().describe('Pass as `after` to go on (also when `items` is empty: new events come after it); null only when the feed is empty and no `after` was given.'),
  }),
  deliveries: z.object({
    status: z.enum(DELIVERY_STATUSES).optional().describe('Only deliveries in this state.'),
    limit: boundedQueryInt(1, OWN_DELIVERY_LIMIT.max, `1…${OWN_DELIVERY_LIMIT.max}, default ${OWN_DELIVERY_LIMIT.default}.`).optional(),
    before: deliveryCursor.optional(),
  }),
  deliveriesAnswer: z.object({
    items: z.array(z.object({
      id: z.string(),
      eventId: z.string().describe('The event\'s `_eid`, also the `webhook-id` header.'),
      eventType: z.string(),
      url: z.string().nullable().describe('Your endpoint\'s URL as configured now.'),
      status: z.enum(DELIVERY_STATUSES),
      attempts: z.array(attempt).describe('Every try, oldest first.'),
      createdAt: z.string(),
      nextAttemptAt: z.string().nullable().describe('When a pending delivery is tried next; null otherwise.'),
    })),
    next: z.string().nullable().describe('Pass as `before` for older deliveries; null on the last page.'),
  }),
  redeliver: z.strictObject({ id: reference().meta({ description: 'The delivery\'s id, from GET /v3/webhook-deliveries.', examples: ['7c9e6679-7425-40de-944b-e07fc1f90ae7'] }) }),
  redeliverAnswer: z.object({ id: z.string(), status: z.literal('pending') }),
  redeliverFailed: z.strictObject({ since: dateTime.describe('ISO 8601 with an offset: failed deliveries created at or after it are sent again.') }),
  redeliverFailedAnswer: z.object({ count: z.number().int().describe('How many failed deliveries are pending again.') }),
  endpointTest: z.strictObject({}),
  endpointTestAnswer: z.object({
    delivered: z.boolean().describe('Whether your endpoint answered 2xx.'),
    statusCode: z.number().int().nullable().describe('Its status; null when no answer came.'),
    durationMs: z.number().int(),
    error: z.string().nullable().describe('Why it was not delivered: the error, a refused target, or the start of a non-2xx answer.'),
  }),
};

export const partnerOrders = {
  page: z.object({
    page: queryInt(1, '1-based page; default 1.').optional(),
    pageSize: queryInt(1, '1…200, default 50; larger values are answered as 200.').optional(),
    ...orderFilters,
  }),
  pageAnswer: z.object({ items: z.array(orderStatusEvent), page: z.number().int(), pageSize: z.number().int(), total: z.number().int() }),
  legacy: z.object({
    limit: queryInt(0, 'At most this many orders; no server-side cap. Default: all.').optional(),
    offset: queryInt(0, 'Skip the first N orders; default 0.').optional(),
    ...orderFilters,
  }),
  legacyAnswer: z.array(orderStatusEvent),
  poll: z.object({
    version: wireString().meta({ description: '"*" for your configured version, or 1.0.0, 1.1.0, 1.3.0.', examples: ['*'] }),
    orderId: wireString().meta({ description: 'The order\'s apiId.', examples: ['demo-job-04'] }),
  }),
};

const IDENTIFIERS = ['jobApiId', 'invoicingEid', 'gidOrderNumber', 'yourOrderID'] as const;
const envelope = <T extends string>(type: T) => ({
  _v: z.literal('1.0.0'),
  _cid: reference(),
  _type: z.literal(type),
  // Bounded as Stripe bounds its metadata: it is echoed in the command's result event, which is kept and delivered.
  _metadata: z.record(wireString().max(40).regex(/^ext-/, 'metadata keys start with "ext-"'), wireString().max(500))
    .refine((entries) => Object.keys(entries).length <= 50, 'at most 50 entries').optional()
    .describe('Up to 50 entries: keys "ext-…" of up to 40 characters, string values of up to 500.'),
});
const identifier = reference().optional();

/** Exactly one of the identifiers a command accepts (CONTRACT §5). */
const exactlyOne = (keys: readonly string[]) => (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
  const given = keys.filter((k) => value[k] !== undefined);
  if (given.length !== 1) {
    ctx.addIssue({ code: 'custom', path: given.length ? given.slice(1) : [], message: `Exactly one of ${keys.join(', ')} is required; ${given.length} given.` });
  }
};

type IdentifierFields = { jobApiId?: string; invoicingEid?: string; gidOrderNumber?: string; yourOrderID?: string };

// The refinement has made sure that exactly one identifier is present.
function identifierOf(input: IdentifierFields): JobIdentifier {
  if (input.jobApiId !== undefined) return { kind: 'jobApiId', value: input.jobApiId };
  if (input.invoicingEid !== undefined) return { kind: 'invoicingEid', value: input.invoicingEid };
  if (input.gidOrderNumber !== undefined) return { kind: 'gidOrderNumber', value: input.gidOrderNumber };
  return { kind: 'yourOrderID', value: input.yourOrderID! };
}

const envelopeOf = <T extends { _v: '1.0.0'; _cid: string; _metadata?: Record<string, string> }>(v: T) =>
  ({ _v: v._v, _cid: v._cid, ...(v._metadata !== undefined && { _metadata: v._metadata }) });

// Each command schema ends in the domain's own form of the command: the same value whichever transport carried it.
const setJobAppointmentFields = z.strictObject({
  ...envelope('SetJobAppointment'),
  jobApiId: identifier, invoicingEid: identifier, gidOrderNumber: identifier, yourOrderID: identifier,
  appointmentStart: dateTime.describe('ISO 8601 with an offset.'),
  appointmentEnd: dateTime.optional().describe('ISO 8601 with an offset; not before appointmentStart.'),
});
const SET_YOUR_ORDER_ID_IDENTIFIERS = IDENTIFIERS.filter((k) => k !== 'yourOrderID');
const setJobYourOrderIdFields = z.strictObject({
  ...envelope('SetJobYourOrderId'),
  jobApiId: identifier, invoicingEid: identifier, gidOrderNumber: identifier,
  yourOrderID: reference().describe('The new partner-side order id (not a lookup key here).'),
});

export const partnerCommands = {
  setJobAppointment: setJobAppointmentFields.superRefine(exactlyOne(IDENTIFIERS)).transform((v): SetJobAppointmentCommand => ({
    ...envelopeOf(v), _type: v._type, identifier: identifierOf(v), appointmentStart: v.appointmentStart, appointmentEnd: v.appointmentEnd ?? null,
  })),
  setJobYourOrderId: setJobYourOrderIdFields.superRefine(exactlyOne(SET_YOUR_ORDER_ID_IDENTIFIERS)).transform((v): SetJobYourOrderIdCommand => ({
    ...envelopeOf(v), _type: v._type,
    identifier: identifierOf({ ...v, yourOrderID: undefined }) as SetJobYourOrderIdCommand['identifier'],
    yourOrderID: v.yourOrderID,
  })),
  /** The identifiers of each body, exactly one of which it names (for the document: zod checks the rule itself). */
  identifiers: { setJobAppointment: IDENTIFIERS, setJobYourOrderId: SET_YOUR_ORDER_ID_IDENTIFIERS },
  answer: z.object({ _cid: z.string(), _type: z.string(), status: z.literal('succeeded'), order: orderStatusEvent }),
  /** Documented only: the signature is checked over the raw bytes before the body is read. */
  signatureHeader: z.object({
    'x-webhook-signature': z.string().optional()
      .describe('Hex HMAC-SHA256 of the exact request bytes, keyed with the signatureKey of your resolved partner configuration; required when it has one.'),
  }),
};

// POST /v3/commands: the seven brand commands (CONTRACT §5). Each variant is strict; the procedure's input is an
// envelope that picks the variant by `_type` (a union cannot be a procedure input), and the document shows the union.
const orderId = reference().describe('The order\'s apiId.');
const customerChanges = z.strictObject({
  email: z.email().max(254).nullable().optional(), externalId: optionalText(), firstName: optionalText(), lastName: optionalText(),
  mobilePhone: optionalText(50), phone: optionalText(50), salutation: optionalText(50),
}).refine((c) => Object.keys(c).length > 0, 'At least one customer field is required.')
  .describe('Only the members given change; null clears one.');
const mappingItem = z.strictObject({ key: wireString().min(1).max(100), value: wireString().max(2000) });

const brandCommandVariants = {
  RefreshOrder: z.strictObject({ ...envelope('RefreshOrder'), orderId }),
  RefreshInvoice: z.strictObject({ ...envelope('RefreshInvoice'), invoiceId: reference() }),
  UpdateCustomer: z.strictObject({ ...envelope('UpdateCustomer'), orderId, customer: customerChanges }),
  UpdateOrderExternalId: z.strictObject({ ...envelope('UpdateOrderExternalId'), orderId, externalId: reference() }),
  UpdateOrderInvoicingExternalId: z.strictObject({
    ...envelope('UpdateOrderInvoicingExternalId'), orderId, invoicingExternalId: reference(),
  }),
  ApplyCancellation: z.strictObject({ ...envelope('ApplyCancellation'), orderId, cancellationReason: wireString().min(1).max(64) }),
  CreateOrderFromMapping: z.strictObject({
    ...envelope('CreateOrderFromMapping'),
    orders: z.array(z.strictObject({ mapping: z.array(mappingItem).max(500) })).min(1).max(100)
      .describe('1…100 orders, each a list of { key, value } items in your own keys, translated by your order mapping.'),
  }),
} satisfies { [T in BrandCommandType]: z.ZodType };

export const brandCommands = {
  /** The document's view of the body: exactly one of the seven commands. */
  union: z.discriminatedUnion('_type', Object.entries(brandCommandVariants).map(([type, schema]) => schema.meta({ id: `${type}Command` })) as
    unknown as [z.ZodObject, ...z.ZodObject[]]).meta({ id: 'BrandCommand' }),
  command: z.object({ ...envelope('RefreshOrder'), _type: wireString() }).passthrough().transform((value, ctx): BrandCommand => {
    const variant = brandCommandVariants[value._type as BrandCommandType];
    if (!variant) {
      ctx.addIssue({ code: 'custom', path: ['_type'], message: `_type must be one of ${BRAND_COMMAND_TYPES.join(', ')}.` });
      return z.NEVER;
    }
    const parsed = variant.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        // Each member the command does not define is named by its own path, as on every other input (server/errors.ts).
        if (issue.code === 'unrecognized_keys') {
          for (const key of issue.keys) ctx.addIssue({ code: 'custom', path: [...issue.path, key], message: 'is not a member of this command' });
        } else ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
      }
      return z.NEVER;
    }
    return parsed.data as BrandCommand;
  }),
  // Documented, not re-checked: the use case builds this answer from the validated command, and accepting is the hot
  // write path (every answer the tests receive is checked against the document instead).
  accepted: z.custom<AcceptedAnswer>(() => true).meta({
    override: {
      type: 'object',
      properties: { _cid: { type: 'string' }, _type: { enum: [...BRAND_COMMAND_TYPES] }, status: { const: 'accepted' } },
      required: ['_cid', '_type', 'status'],
      additionalProperties: false,
    },
  }),
  poll: z.object({ cid: reference().meta({ description: 'The `_cid` you sent the command with.', examples: ['cancel-demo-job-07-0001'] }) }),
  outcome: commandOutcomeEvent.nullable(),
};
