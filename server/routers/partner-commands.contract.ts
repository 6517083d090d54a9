import { z } from 'zod';
import type { SetJobAppointmentCommand } from '../../domain/use-cases/set-job-appointment.ts';
import type { SetJobYourOrderIdCommand } from '../../domain/use-cases/set-job-your-order-id.ts';
import type { Meta } from '../meta.ts';
import { orderStatusEvent } from '../openapi/payload-docs.ts';
import { reference } from '../wire-text.ts';
import type { RouteContract } from './contracts.ts';
import {
  dateTime,
  envelope,
  envelopeOf,
  exactlyOne,
  IDENTIFIERS,
  identifier,
  identifierOf,
} from './shared.contract.ts';

// Each command schema ends in the domain's own form of the command: the same value whichever transport carried it.
const setJobAppointmentFields = z.strictObject({
  ...envelope('SetJobAppointment'),
  jobApiId: identifier,
  invoicingEid: identifier,
  gidOrderNumber: identifier,
  yourOrderID: identifier,
  appointmentStart: dateTime.describe('ISO 8601 with an offset.'),
  appointmentEnd: dateTime.optional().describe('ISO 8601 with an offset; not before appointmentStart.'),
});
const SET_YOUR_ORDER_ID_IDENTIFIERS = IDENTIFIERS.filter((k) => k !== 'yourOrderID');
const setJobYourOrderIdFields = z.strictObject({
  ...envelope('SetJobYourOrderId'),
  jobApiId: identifier,
  invoicingEid: identifier,
  gidOrderNumber: identifier,
  yourOrderID: reference().describe('The new partner-side order id (not a lookup key here).'),
});

export const partnerCommands = {
  setJobAppointment: setJobAppointmentFields.superRefine(exactlyOne(IDENTIFIERS)).transform(
    (v): SetJobAppointmentCommand => ({
      ...envelopeOf(v),
      _type: v._type,
      identifier: identifierOf(v),
      appointmentStart: v.appointmentStart,
      appointmentEnd: v.appointmentEnd ?? null,
    }),
  ),
  setJobYourOrderId: setJobYourOrderIdFields.superRefine(exactlyOne(SET_YOUR_ORDER_ID_IDENTIFIERS)).transform(
    (v): SetJobYourOrderIdCommand => ({
      ...envelopeOf(v),
      _type: v._type,
      identifier: identifierOf({ ...v, yourOrderID: undefined }) as SetJobYourOrderIdCommand['identifier'],
      yourOrderID: v.yourOrderID,
    }),
  ),
  /** The identifiers of each body, exactly one of which it names (for the document: zod checks the rule itself). */
  identifiers: { setJobAppointment: IDENTIFIERS, setJobYourOrderId: SET_YOUR_ORDER_ID_IDENTIFIERS },
  /**
   * What a command's outcome line may say of a body, read before (or without) its check: the `_cid` and `_type` the
   * schema would take, else nothing. The raw fields are the sender's text, of any length, refused or not.
   */
  logged: z
    .object({
      _cid: setJobAppointmentFields.shape._cid.optional().catch(undefined),
      _type: z
        .union([setJobAppointmentFields.shape._type, setJobYourOrderIdFields.shape._type])
        .optional()
        .catch(undefined),
    })
    .catch({}),
  answer: z.object({ _cid: z.string(), _type: z.string(), status: z.literal('succeeded'), order: orderStatusEvent }),
  /** Documented only: the signature is checked over the raw bytes before the body is read. */
  signatureHeader: z.object({
    'x-webhook-signature': z
      .string()
      .optional()
      .describe(
        'Hex HMAC-SHA256 of the exact request bytes, keyed with the signatureKey of your resolved partner configuration; required when it has one.',
      ),
  }),
};

const description =
  'Signed with x-webhook-signature (hex HMAC-SHA256 of the raw body) when your resolved partner configuration has a ' +
  'key. Idempotent per _cid: the same body gets the first answer again; another body is 409. Checks in this order: ' +
  'token (401), signature (401), body (400), _cid replay, job (404), ownership (403: the job must be assigned to you ' +
  'or to one of your children).';
const meta = (path: string, summary: string, exactlyOneOf: readonly string[]): Meta => ({
  roles: ['partner'],
  openapi: {
    method: 'POST',
    path: path as `/${string}`,
    tags: ['partner commands'],
    summary,
    description,
    requestHeaders: partnerCommands.signatureHeader,
  },
  rest: { problems: [403, 404, 409], exactlyOneOf },
});

export const partnerCommandRoutes = {
  setJobAppointment: {
    meta: meta(
      '/v3/commands/partner/appointment',
      'SetJobAppointment: confirm or move the appointment of a job assigned to you',
      partnerCommands.identifiers.setJobAppointment,
    ),
    input: partnerCommands.setJobAppointment,
    output: partnerCommands.answer,
  },
  setJobYourOrderId: {
    meta: meta(
      '/v3/commands/partner/your-order-id',
      'SetJobYourOrderId: set or overwrite your own order id on a job assigned to you',
      partnerCommands.identifiers.setJobYourOrderId,
    ),
    input: partnerCommands.setJobYourOrderId,
    output: partnerCommands.answer,
  },
} satisfies Record<string, RouteContract>;
