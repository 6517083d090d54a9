import { EntitySchema } from '@mikro-orm/core';
import { Account } from '../../domain/account.ts';
import { CancellationReason } from '../../domain/cancellation.ts';
import { Contact } from '../../domain/contact.ts';
import { Invoice } from '../../domain/invoice.ts';
import { Job } from '../../domain/job.ts';
import { OrderMapping } from '../../domain/order-mapping.ts';
import { WebhookConfig } from '../../domain/webhook-config.ts';

// Plain domain classes mapped from the outside; the tables themselves are defined by the migrations.
const uuid = { type: 'uuid' } as const;
const text = { type: 'text' } as const;
const nullableText = { type: 'text', nullable: true } as const;
const time = { type: 'datetime' } as const;
const nullableTime = { type: 'datetime', nullable: true } as const;
const json = { type: 'json' } as const;
const nullableJson = { type: 'json', nullable: true } as const;

export const AccountSchema = new EntitySchema<Account>({
  class: Account,
  tableName: 'accounts',
  properties: { id: { ...uuid, primary: true }, name: text, role: text, parentId: { type: 'uuid', nullable: true }, createdAt: time },
});

export const ContactSchema = new EntitySchema<Contact>({
  class: Contact,
  tableName: 'contacts',
  properties: { id: { ...uuid, primary: true }, accountId: uuid, email: text, apiAccess: { type: 'boolean' }, createdAt: time },
});

export const WebhookConfigSchema = new EntitySchema<WebhookConfig>({
  class: WebhookConfig,
  tableName: 'webhook_configs',
  properties: {
    id: { ...uuid, primary: true }, accountId: uuid, scope: text, url: nullableText, transformer: text, version: text,
    signatureKey: nullableText, enabled: { type: 'boolean' }, createdAt: time, updatedAt: time,
  },
});

export const JobSchema = new EntitySchema<Job>({
  class: Job,
  tableName: 'jobs',
  properties: {
    apiId: { ...text, primary: true }, brandAccountId: uuid, partnerId: { type: 'uuid', nullable: true }, name: text,
    status: text, invoicingEid: nullableText, eid: nullableText, extPartnerId: nullableText,
    customer: nullableJson, customerBilling: nullableJson, shippingAddress: nullableJson, products: json, documents: json,
    orderType: nullableText, projectId: nullableText, projectName: nullableText,
    appointmentStart: nullableTime, appointmentEnd: nullableTime, startTimestamp: nullableTime, finishTimestamp: nullableTime,
    createdAt: time, updatedAt: time,
  },
});

export const InvoiceSchema = new EntitySchema<Invoice>({
  class: Invoice,
  tableName: 'invoices',
  properties: {
    id: { ...uuid, primary: true }, orderId: text, number: text, type: text, status: text,
    cancellationStatus: nullableText, items: json, createdAt: time, updatedAt: time,
  },
});

export const CancellationReasonSchema = new EntitySchema<CancellationReason>({
  class: CancellationReason,
  tableName: 'cancellation_reasons',
  properties: { name: { ...text, primary: true }, outcome: text },
});

export const OrderMappingSchema = new EntitySchema<OrderMapping>({
  class: OrderMapping,
  tableName: 'order_mappings',
  properties: { brandAccountId: { ...uuid, primary: true }, fields: json, updatedAt: time },
});

export const entities = [
  AccountSchema, ContactSchema, WebhookConfigSchema, JobSchema, InvoiceSchema, CancellationReasonSchema, OrderMappingSchema,
];
