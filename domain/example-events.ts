import { type CommandEnvelope, CommandError } from './command.ts';
import { Invoice } from './invoice.ts';
import { Job } from './job.ts';
import { renderCommandOutcome, renderInvoice, renderOrderStatus, renderTestEvent } from './payloads.ts';
import type { PayloadFormat } from './webhook-config.ts';

// Example events (CONTRACT §11): example orders, invoices and commands, rendered by the one renderer of each payload,
// so that an example is exactly what a real event of its type looks like in the endpoint's transformer and version.
// Every value is set but an invoice's cancellationStatus (null unless it was cancelled), so that members show their
// kind.

export const EXAMPLE_EVENT_TYPES = [
  'WebhookTestEvent',
  'OrderStatusEvent',
  'InvoiceEvent',
  'CommandResultEvent',
  'CommandErrorEvent',
] as const;
export type ExampleEventType = (typeof EXAMPLE_EVENT_TYPES)[number];

const ORDER_ID = 'example-order-0001';

function exampleJob(now: Date): Job {
  const day = (offsetDays: number, hour: number) =>
    new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + offsetDays, hour));
  return new Job({
    apiId: ORDER_ID,
    brandAccountId: 'example-brand',
    partnerId: 'example-partner',
    name: 'O-0000000001',
    status: 'appointment_confirmed',
    invoicingEid: 'INV-EXAMPLE-1',
    eid: 'BRAND-REF-1',
    extPartnerId: 'PARTNER-REF-1',
    customer: {
      email: 'jane.doe@example.com',
      externalId: 'CUST-1',
      firstName: 'Jane',
      lastName: 'Doe',
      mobilePhone: '+49 151 00000000',
      phone: '+49 30 0000000',
      salutation: 'Ms',
    },
    customerBilling: {
      firstName: 'Jane',
      lastName: 'Doe',
      company: 'Example GmbH',
      street: 'Examplestraße',
      houseNumber: '1',
      postalCode: '10115',
      city: 'Berlin',
      countryCode: 'DE',
    },
    shippingAddress: {
      street: 'Examplestraße',
      houseNumber: '1',
      postalCode: '10115',
      city: 'Berlin',
      countryCode: 'DE',
    },
    products: [{ sku: 'WALLBOX-11KW', name: 'Wallbox 11 kW', quantity: 1 }],
    documents: [
      {
        type: 'installation-protocol',
        files: [{ name: 'protocol.pdf', url: 'https://files.example.com/protocol.pdf' }],
      },
    ],
    orderType: 'installation',
    projectId: 'PROJECT-1',
    projectName: 'Example project',
    appointmentStart: day(7, 9),
    appointmentEnd: day(7, 11),
    startTimestamp: day(-1, 8),
    finishTimestamp: day(7, 12),
    createdAt: day(-1, 8),
    updatedAt: now,
  });
}

const exampleInvoice = (now: Date) =>
  new Invoice({
    id: 'example-invoice-0001',
    orderId: ORDER_ID,
    number: 'R-2026-0001',
    type: 'invoice',
    status: 'sent',
    cancellationStatus: null,
    items: [{ description: 'Wallbox installation', quantity: 1, unitPrice: 499.5, total: 499.5 }],
    createdAt: now,
    updatedAt: now,
  });

const exampleCommand = (type: string): CommandEnvelope => ({
  _v: '1.0.0',
  _cid: 'example-command-0001',
  _type: type,
  _metadata: { 'ext-ticket': 'T-1' },
});

/** An example of the type in the endpoint's format, with event id `eid`, as of `now`. */
export function renderExampleEvent(
  type: ExampleEventType,
  format: PayloadFormat,
  eid: string,
  now: Date,
): Record<string, unknown> {
  switch (type) {
    case 'WebhookTestEvent':
      return renderTestEvent(format.version, eid, now);
    case 'OrderStatusEvent':
      return renderOrderStatus(exampleJob(now), format, eid);
    case 'InvoiceEvent':
      return renderInvoice(exampleInvoice(now), format.version, eid);
    case 'CommandResultEvent':
      return renderCommandOutcome(
        exampleCommand('UpdateOrderExternalId'),
        { status: 'succeeded', result: { orderId: ORDER_ID } },
        format.version,
        eid,
      );
    case 'CommandErrorEvent':
      return renderCommandOutcome(
        exampleCommand('CreateOrderFromMapping'),
        {
          status: 'failed',
          error: new CommandError('MAPPING_INVALID', 'The orders do not match your mapping.', [
            { key: 'orders[0].city', message: 'Required' },
          ]),
        },
        format.version,
        eid,
      );
  }
}
