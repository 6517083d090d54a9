import { EntitySchema } from '@mikro-orm/core';
import { Account } from '../../domain/account.ts';
import { CancellationReason } from '../../domain/cancellation.ts';
import { Contact } from '../../domain/contact.ts';
import { Invoice } from '../../domain/invoice.ts';
import { OrderMapping } from '../../domain/order-mapping.ts';

// Plain domain classes mapped from the outside; the tables themselves are defined by the migrations. Jobs,
// configurations, commands and events are read and written with SQL of their own (the hot paths), and have no schema
// here.
const uuid = { type: 'uuid' } as const;
const text = { type: 'text' } as const;
const nullableText = { type: 'text', nullable: true } as const;
const time = { type: 'datetime' } as const;
const json = { type: 'json' } as const;

const AccountSchema = new EntitySchema<Account>({
  class: Account,
  tableName: 'accounts',
  properties: {
    id: { ...uuid, primary: true },
    name: text,
    role: text,
    parentId: { type: 'uuid', nullable: true },
    createdAt: time,
  },
});

const ContactSchema = new EntitySchema<Contact>({
  class: Contact,
  tableName: 'contacts',
  properties: {
    id: { ...uuid, primary: true },
    accountId: uuid,
    email: text,
    apiAccess: { type: 'boolean' },
    createdAt: time,
  },
});

const InvoiceSchema = new EntitySchema<Invoice>({
  class: Invoice,
  tableName: 'invoices',
  properties: {
    id: { ...uuid, primary: true },
    orderId: text,
    number: text,
    type: text,
    status: text,
    cancellationStatus: nullableText,
    items: json,
    createdAt: time,
    updatedAt: time,
  },
});

const CancellationReasonSchema = new EntitySchema<CancellationReason>({
  class: CancellationReason,
  tableName: 'cancellation_reasons',
  properties: { name: { ...text, primary: true }, outcome: text },
});

const OrderMappingSchema = new EntitySchema<OrderMapping>({
  class: OrderMapping,
  tableName: 'order_mappings',
  properties: { brandAccountId: { ...uuid, primary: true }, fields: json, updatedAt: time },
});

export const entities = [AccountSchema, ContactSchema, InvoiceSchema, CancellationReasonSchema, OrderMappingSchema];
