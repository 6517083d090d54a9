import { z } from 'zod';
import { ROLES } from '../../domain/account.ts';
import { CANCELLATION_OUTCOMES } from '../../domain/cancellation.ts';
import { DELIVERY_STATUSES } from '../../domain/delivery.ts';
import { EVENT_TYPES } from '../../domain/event.ts';
import { CANCELLATION_STATUSES, INVOICE_STATUSES, INVOICE_TYPES } from '../../domain/invoice.ts';
import { JOB_STATUSES } from '../../domain/job.ts';
import { DELIVERY_LIST_LIMIT } from '../../domain/use-cases/list-deliveries.ts';
import { PAYLOAD_VERSIONS, SCOPES, TRANSFORMERS } from '../../domain/webhook-config.ts';
import { reference, wireString } from '../wire-text.ts';
import { consoleInputs as operator } from './admin-console.contract.ts';
import type { RouteContract } from './contracts.ts';
import { dateTime, id, optionalText, text } from './shared.contract.ts';
import { previousKeyValidFor, signatureKey } from './webhook-config.contract.ts';

const customer = z.strictObject({
  email: optionalText(254),
  externalId: optionalText(),
  firstName: optionalText(),
  lastName: optionalText(),
  mobilePhone: optionalText(50),
  phone: optionalText(50),
  salutation: optionalText(50),
});
const customerBilling = z.strictObject({
  firstName: optionalText(),
  lastName: optionalText(),
  company: optionalText(),
  street: optionalText(),
  houseNumber: optionalText(20),
  postalCode: optionalText(20),
  city: optionalText(),
  countryCode: optionalText(2),
});
const shippingAddress = z.strictObject({
  street: optionalText(),
  houseNumber: optionalText(20),
  postalCode: optionalText(20),
  city: optionalText(),
  countryCode: optionalText(2),
});
const product = z.strictObject({
  sku: optionalText(),
  name: optionalText(),
  quantity: z.number().int().min(0).nullable().optional(),
});
const documentFile = z.strictObject({ name: optionalText(), url: optionalText(2000) });
const document = z.strictObject({ type: optionalText(), files: z.array(documentFile).max(50).default([]) });

/** Completes a nested object so that every key of its shape is present, absent ones as null. */
const complete = <S extends z.ZodRawShape>(shape: z.ZodObject<S>) =>
  shape.transform(
    (value) =>
      Object.fromEntries(Object.keys(shape.shape).map((k) => [k, (value as Record<string, unknown>)[k] ?? null])) as {
        [K in keyof z.output<z.ZodObject<S>>]-?: Exclude<z.output<z.ZodObject<S>>[K], undefined> | null;
      },
  );

export const admin = {
  createAccount: z.strictObject({ name: text(), role: z.enum(ROLES), parentId: id.nullable().optional() }),
  createContact: z.strictObject({
    accountId: id,
    email: wireString().trim().max(254),
    apiAccess: z.boolean().optional(),
  }),
  setApiAccess: z.strictObject({ contactId: id, apiAccess: z.boolean() }),
  upsertWebhookConfig: z.strictObject({
    accountId: id,
    scope: z.enum(SCOPES),
    url: wireString().max(2000).nullable().optional(),
    transformer: z.enum(TRANSFORMERS),
    version: z.enum(PAYLOAD_VERSIONS),
    signatureKey: wireString().max(256).nullable().optional(),
    enabled: z.boolean().optional(),
    asymmetricSigning: z.boolean().optional(),
  }),
  rotateWebhookKey: z.strictObject({
    accountId: id,
    scope: z.enum(SCOPES),
    signatureKey: signatureKey().optional(),
    asymmetric: z.boolean().optional(),
    previousKeyValidFor: previousKeyValidFor(),
  }),
  createJob: z.strictObject({
    brandAccountId: id,
    partnerId: id.nullable().optional(),
    apiId: text(100).optional(),
    name: text(100).optional(),
    status: z.enum(JOB_STATUSES).optional(),
    invoicingEid: optionalText(),
    eid: optionalText(),
    extPartnerId: optionalText(),
    customer: complete(customer).nullable().optional(),
    customerBilling: complete(customerBilling).nullable().optional(),
    shippingAddress: complete(shippingAddress).nullable().optional(),
    products: z.array(complete(product)).max(100).optional(),
    documents: z
      .array(
        document.transform((d) => ({
          type: d.type ?? null,
          files: d.files.map((f) => ({ name: f.name ?? null, url: f.url ?? null })),
        })),
      )
      .max(50)
      .optional(),
    orderType: optionalText(),
    projectId: optionalText(),
    projectName: optionalText(),
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
    items: z
      .array(
        z.strictObject({
          description: text(500),
          quantity: z.number().finite(),
          unitPrice: z.number().finite(),
          total: z.number().finite(),
        }),
      )
      .max(500),
  }),
  upsertCancellationReason: z.strictObject({ name: text(64), outcome: z.enum(CANCELLATION_OUTCOMES) }),
  upsertOrderMapping: z.strictObject({
    brandAccountId: id,
    fields: z
      .array(z.strictObject({ key: text(100), target: text(100), required: z.boolean().default(false) }))
      .min(1)
      .max(500),
  }),
  advanceClock: z.strictObject({
    seconds: z
      .number()
      .int()
      .min(1)
      .max(10 * 365 * 86_400),
  }),
  listDeliveries: z
    .strictObject({
      accountId: id.optional(),
      status: z.enum(DELIVERY_STATUSES).optional(),
      eventType: z.enum(EVENT_TYPES).optional(),
      orderId: reference().optional(),
      limit: z.number().int().min(1).max(DELIVERY_LIST_LIMIT.max).optional(),
    })
    .optional(),
  getDelivery: z.strictObject({ deliveryId: id }),
  redeliver: z.strictObject({ deliveryId: id }),
  redeliverFailed: z.strictObject({ accountId: id, since: dateTime }),
  getCommand: z.strictObject({ accountId: id, cid: reference() }),
};

/** Internal tools' procedures: on /trpc only, behind the admin token, so without a REST operation or roles. */
const internal = <I extends RouteContract['input']>(input: I) => ({ meta: {}, input });

/** The admin router's routes, by its sub-routers. */
export const adminRoutes = {
  accounts: {
    create: internal(admin.createAccount),
    search: internal(operator.searchAccounts),
    get: internal(operator.getAccount),
  },
  contacts: { create: internal(admin.createContact), setApiAccess: internal(admin.setApiAccess) },
  webhookConfigs: {
    upsert: internal(admin.upsertWebhookConfig),
    rotateKey: internal(admin.rotateWebhookKey),
    list: internal(operator.listWebhookConfigs),
  },
  jobs: {
    create: internal(admin.createJob),
    assign: internal(admin.assignJob),
    setStatus: internal(admin.setJobStatus),
    get: internal(operator.getJob),
  },
  invoices: { create: internal(admin.createInvoice) },
  cancellationReasons: { upsert: internal(admin.upsertCancellationReason) },
  orderMappings: { upsert: internal(admin.upsertOrderMapping) },
  deliveries: {
    list: internal(admin.listDeliveries),
    search: internal(operator.searchDeliveries),
    get: internal(admin.getDelivery),
    redeliver: internal(admin.redeliver),
    redeliverFailed: internal(admin.redeliverFailed),
  },
  commands: { get: internal(admin.getCommand), find: internal(operator.findCommands) },
  gauges: { summary: internal(operator.gauges) },
  testClock: { advance: internal(admin.advanceClock) },
} satisfies Record<string, Record<string, RouteContract>>;
