import { z } from 'zod';

// Documentation of the payloads the domain renders (domain/payloads.ts). Answers are not validated against it:
// the renderer is the single source and is covered by golden tests; validating 50 items per page would cost ~10 %.
type Schema = Record<string, unknown>;
const str: Schema = { type: ['string', 'null'] };
const time: Schema = { type: ['string', 'null'], format: 'date-time' };
const obj = (keys: string[]): Schema => ({ type: ['object', 'null'], properties: Object.fromEntries(keys.map((k) => [k, str])) });
const customer = obj(['email', 'externalId', 'firstName', 'lastName', 'mobilePhone', 'phone', 'salutation']);
const shippingAddress = obj(['street', 'houseNumber', 'postalCode', 'city', 'countryCode']);
const products = { type: 'array', items: { type: 'object', properties: { sku: str, name: str, quantity: { type: ['integer', 'null'] } } } };
const head = {
  _eid: { type: 'string', description: 'Event id; "polled" for orders served by polling.' },
  _type: { const: 'OrderStatusEvent' },
  _v: { enum: ['1.0.0', '1.1.0', '1.3.0'], description: 'Payload version of the receiving configuration.' },
};
const since11 = { projectId: { ...str, description: 'from 1.1.0' }, projectName: { ...str, description: 'from 1.1.0' } };

export const orderStatusEvent = z.custom<Record<string, unknown>>(() => true).meta({
  id: 'OrderStatusEvent',
  override: <Schema>{
    description: 'One order, in the shape of the receiving configuration\'s transformer and version. Absent values are null, absent lists [].',
    oneOf: [
      {
        title: 'partner-format',
        type: 'object',
        properties: {
          ...head, jobApiId: { type: 'string' }, gidOrderNumber: { type: 'string' }, invoicingEid: str, yourOrderID: str,
          status: { type: 'string' }, customer, shippingAddress, products, appointmentStart: time, appointmentEnd: time,
          ...since11, partnerId: { ...str, description: 'from 1.3.0' }, updatedAt: { ...time, description: 'from 1.3.0' },
        },
      },
      {
        title: 'default',
        type: 'object',
        properties: {
          ...head, orderId: { type: 'string' }, orderNumber: { type: 'string' }, status: { type: 'string' }, externalId: str,
          invoicingExternalId: str, orderType: str, customer,
          customerBilling: obj(['firstName', 'lastName', 'company', 'street', 'houseNumber', 'postalCode', 'city', 'countryCode']),
          shippingAddress, products,
          documents: { type: 'array', items: { type: 'object', properties: { type: str, files: { type: 'array', items: { type: 'object', properties: { name: str, url: str } } } } } },
          appointmentStart: time, appointmentEnd: time, startTimestamp: time, finishTimestamp: time,
          ...since11, updatedAt: { ...time, description: 'from 1.3.0' },
        },
      },
    ],
  },
});
