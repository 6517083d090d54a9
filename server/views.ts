import type { Account } from '../domain/account.ts';
import type { Contact } from '../domain/contact.ts';
import type { DeliveryDetail, DeliveryView } from '../domain/delivery.ts';
import type { Job } from '../domain/job.ts';
import type { CommandEntry } from '../domain/ports.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The internal tools' view of a job: every stored field, times in ISO 8601 UTC. */
export const jobView = (job: Job) => ({
  apiId: job.apiId,
  name: job.name,
  status: job.status,
  brandAccountId: job.brandAccountId,
  partnerId: job.partnerId,
  invoicingEid: job.invoicingEid,
  eid: job.eid,
  extPartnerId: job.extPartnerId,
  customer: job.customer,
  customerBilling: job.customerBilling,
  shippingAddress: job.shippingAddress,
  products: job.products,
  documents: job.documents,
  orderType: job.orderType,
  projectId: job.projectId,
  projectName: job.projectName,
  appointmentStart: iso(job.appointmentStart),
  appointmentEnd: iso(job.appointmentEnd),
  startTimestamp: iso(job.startTimestamp),
  finishTimestamp: iso(job.finishTimestamp),
  createdAt: iso(job.createdAt),
  updatedAt: iso(job.updatedAt),
});

/** A delivery in the delivery log: times in ISO 8601 UTC (CONTRACT §9). */
export const deliveryView = (d: DeliveryView) => ({
  id: d.id,
  eventId: d.eventId,
  eventType: d.eventType,
  orderId: d.orderId,
  accountId: d.accountId,
  scope: d.scope,
  url: d.url,
  status: d.status,
  attempts: d.attempts.map((a) => ({
    at: a.at.toISOString(),
    statusCode: a.statusCode,
    durationMs: a.durationMs,
    error: a.error,
  })),
  createdAt: d.createdAt.toISOString(),
  nextAttemptAt: iso(d.nextAttemptAt),
});

/** One delivery in full (CONTRACT §11): as listed, with the payload sent and each attempt's request and answer. */
export const deliveryDetailView = (d: DeliveryDetail) => ({
  ...deliveryView(d),
  payload: d.payload,
  attempts: d.attempts.map((a) => ({
    at: a.at.toISOString(),
    statusCode: a.statusCode,
    durationMs: a.durationMs,
    error: a.error,
    request: a.request,
    response: a.response,
  })),
});

/** An account as the operator console shows it. */
export const accountView = (a: Account) => ({
  id: a.id,
  name: a.name,
  role: a.role,
  parentId: a.parentId,
  createdAt: a.createdAt.toISOString(),
});

export const contactView = (c: Contact) => ({
  id: c.id,
  email: c.email,
  apiAccess: c.apiAccess,
  createdAt: c.createdAt.toISOString(),
});

/** A command found by its `_cid` (admin.commands.find). */
export const commandEntryView = (c: CommandEntry) => ({
  accountId: c.accountId,
  cid: c.cid,
  type: c.type,
  status: c.status,
  result: c.result,
  createdAt: c.createdAt.toISOString(),
  finishedAt: iso(c.finishedAt),
});
