import type { CommandEnvelope, CommandOutcome } from './command.ts';
import type { Invoice } from './invoice.ts';
import type { Customer, CustomerBilling, Job, OrderDocument, Product, ShippingAddress } from './job.ts';
import { CUSTOMER_BILLING_KEYS, CUSTOMER_KEYS, SHIPPING_ADDRESS_KEYS } from './job.ts';
import type { PayloadFormat, PayloadVersion } from './webhook-config.ts';

/** `_eid` of orders served by polling rather than delivered as events (CONTRACT §6). */
export const POLLED_EID = 'polled';

type Payload = Record<string, unknown>;

const iso = (date: Date | null) => (date ? date.toISOString() : null);
const atLeast = (version: PayloadVersion, wanted: PayloadVersion) => version >= wanted; // same-width semver strings

function pick<K extends string>(
  keys: readonly K[],
  source: Partial<Record<K, unknown>> | null,
): Record<K, unknown> | null {
  if (!source) return null;
  const out = {} as Record<K, unknown>;
  for (const key of keys) out[key] = source[key] ?? null;
  return out;
}

const customer = (value: Customer | null) => pick(CUSTOMER_KEYS, value);
const customerBilling = (value: CustomerBilling | null) => pick(CUSTOMER_BILLING_KEYS, value);
const shippingAddress = (value: ShippingAddress | null) => pick(SHIPPING_ADDRESS_KEYS, value);
const products = (value: Product[] | null) =>
  (value ?? []).map((p) => ({ sku: p.sku ?? null, name: p.name ?? null, quantity: p.quantity ?? null }));
const documents = (value: OrderDocument[] | null) =>
  (value ?? []).map((d) => ({
    type: d.type ?? null,
    files: (d.files ?? []).map((f) => ({ name: f.name ?? null, url: f.url ?? null })),
  }));

/**
 * The one OrderStatusEvent renderer: listings, polling and events all go through it, so a payload
 * never differs by the road it took. A later version only adds fields.
 */
export function renderOrderStatus(job: Job, format: PayloadFormat, eid: string): Payload {
  const { version } = format;
  // Built as one literal, later fields appended: key order is part of what integrators see, and spreads here
  // cost several times more on the listings' hot path.
  if (format.transformer === 'partner-format') {
    const payload: Payload = {
      _eid: eid,
      _type: 'OrderStatusEvent',
      _v: version,
      jobApiId: job.apiId,
      gidOrderNumber: job.name,
      invoicingEid: job.invoicingEid,
      yourOrderID: job.extPartnerId,
      status: job.status,
      customer: customer(job.customer),
      shippingAddress: shippingAddress(job.shippingAddress),
      products: products(job.products),
      appointmentStart: iso(job.appointmentStart),
      appointmentEnd: iso(job.appointmentEnd),
    };
    if (atLeast(version, '1.1.0')) {
      payload.projectId = job.projectId;
      payload.projectName = job.projectName;
    }
    if (atLeast(version, '1.3.0')) {
      payload.partnerId = job.partnerId;
      payload.updatedAt = iso(job.updatedAt);
    }
    return payload;
  }
  const payload: Payload = {
    _eid: eid,
    _type: 'OrderStatusEvent',
    _v: version,
    orderId: job.apiId,
    orderNumber: job.name,
    status: job.status,
    externalId: job.eid,
    invoicingExternalId: job.invoicingEid,
    orderType: job.orderType,
    customer: customer(job.customer),
    customerBilling: customerBilling(job.customerBilling),
    shippingAddress: shippingAddress(job.shippingAddress),
    products: products(job.products),
    documents: documents(job.documents),
    appointmentStart: iso(job.appointmentStart),
    appointmentEnd: iso(job.appointmentEnd),
    startTimestamp: iso(job.startTimestamp),
    finishTimestamp: iso(job.finishTimestamp),
  };
  if (atLeast(version, '1.1.0')) {
    payload.projectId = job.projectId;
    payload.projectName = job.projectName;
  }
  if (atLeast(version, '1.3.0')) payload.updatedAt = iso(job.updatedAt);
  return payload;
}

/** InvoiceEvent (CONTRACT §6): the same fields in every version; `_v` is the receiver's. */
export function renderInvoice(invoice: Invoice, version: PayloadVersion, eid: string): Payload {
  return {
    _eid: eid,
    _type: 'InvoiceEvent',
    _v: version,
    invoiceId: invoice.id,
    orderId: invoice.orderId,
    number: invoice.number,
    type: invoice.type,
    status: invoice.status,
    cancellationStatus: invoice.cancellationStatus,
    items: invoice.items.map((i) => ({
      description: i.description,
      quantity: i.quantity,
      unitPrice: i.unitPrice,
      total: i.total,
    })),
  };
}

/** WebhookTestEvent (CONTRACT §10): what an endpoint test sends by default; `_v` is the endpoint's. */
export function renderTestEvent(version: PayloadVersion, eid: string, sentAt: Date): Payload {
  return { _eid: eid, _type: 'WebhookTestEvent', _v: version, sentAt: sentAt.toISOString() };
}

/** CommandResultEvent or CommandErrorEvent (CONTRACT §6) for the sender of a command. */
export function renderCommandOutcome(
  command: CommandEnvelope,
  outcome: CommandOutcome,
  version: PayloadVersion,
  eid: string,
): Payload {
  const head = (type: string) => ({
    _eid: eid,
    _type: type,
    _v: version,
    _cid: command._cid,
    commandType: command._type,
    _metadata: { ...command._metadata },
  });
  if (outcome.status === 'succeeded') return { ...head('CommandResultEvent'), result: outcome.result };
  const { error } = outcome;
  return {
    ...head('CommandErrorEvent'),
    code: error.code,
    message: error.message,
    details: error.details ? error.details.map((d) => ({ key: d.key, message: d.message })) : null,
  };
}
