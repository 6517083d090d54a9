// Events as the service's outbox stores them, for bench/events-feed: written straight into the events table.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';

/**
 * An OrderStatusEvent of the `default` transformer, version 1.3.0, with every field renderOrderStatus writes, in its
 * order, for order `n`; `_eid` is the event's id. Stored as the service's outbox stores payloads: JSON.stringify'd.
 */
const STATUSES = ['accepted', 'appointment_confirmed', 'started', 'finished', 'completed'];
const payload = (id: string, n: number, orderId: string, at: Date) =>
  JSON.stringify({
    _eid: id,
    _type: 'OrderStatusEvent',
    _v: '1.3.0',
    orderId,
    orderNumber: `GID-${String(n).padStart(10, '0')}`,
    status: STATUSES[n % STATUSES.length],
    externalId: `EXT-${n}`,
    invoicingExternalId: `INV-${n % 997}`,
    orderType: 'installation',
    customer: {
      email: `customer${n}@example.com`,
      externalId: `C-${n}`,
      firstName: 'Alexandra',
      lastName: 'Sample',
      mobilePhone: '+49 170 1234567',
      phone: null,
      salutation: 'Frau',
    },
    customerBilling: null,
    shippingAddress: {
      street: 'Hauptstraße',
      houseNumber: '12a',
      postalCode: '10115',
      city: 'Berlin',
      countryCode: 'DE',
    },
    products: [{ sku: 'WB-11KW', name: 'Wallbox 11 kW', quantity: 1 }],
    documents: [],
    appointmentStart: '2026-12-01T08:00:00.000Z',
    appointmentEnd: '2026-12-01T12:00:00.000Z',
    startTimestamp: null,
    finishTimestamp: null,
    projectId: `P-2026-${n % 50}`,
    projectName: 'Wallbox rollout 2026',
    updatedAt: at.toISOString(),
  });
// As the service's outbox writes events: one statement for any number, from arrays.
const INSERT = `
  insert into events (id, account_id, scope, type, order_id, payload, endpoint_id, created_at)
  select id, $1, 'brand', 'OrderStatusEvent', order_id, payload, $2, created_at
  from unnest($3::uuid[], $4::text[], $5::json[], $6::timestamptz[]) as t(id, order_id, payload, created_at)`;
export interface SampleEvent {
  id: string;
  orderId: string;
  payload: string;
  at: Date;
}

/** Writes `events` of the brand's endpoint in one statement. */
export const insertEvents = (db: pg.Pool, brandId: string, endpointId: string, events: SampleEvent[]) =>
  db.query(INSERT, [
    brandId,
    endpointId,
    events.map((e) => e.id),
    events.map((e) => e.orderId),
    events.map((e) => e.payload),
    events.map((e) => e.at),
  ]);
/** Event `n` of an order named by `prefix`, created now. */
export const event = (n: number, prefix: string): SampleEvent => {
  const id = randomUUID();
  const orderId = `${prefix}-${n}`;
  const at = new Date();
  return { id, orderId, payload: payload(id, n, orderId, at), at };
};
