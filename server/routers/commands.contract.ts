import { z } from 'zod';
import { BRAND_COMMAND_TYPES, type BrandCommand, type BrandCommandType } from '../../domain/command.ts';
import type { AcceptedAnswer } from '../../domain/use-cases/accept-command.ts';
import { NOT_A_MEMBER } from '../errors.ts';
import { commandOutcomeEvent } from '../openapi/payload-docs.ts';
import { lookupReference, reference, wireString } from '../wire-text.ts';
import type { RouteContract } from './contracts.ts';
import { envelope, optionalText } from './shared.contract.ts';

// POST /v3/commands: the seven brand commands (CONTRACT §5). Each variant is strict; the procedure's input is an
// envelope that picks the variant by `_type` (a union cannot be a procedure input), and the document shows the union.
const orderId = lookupReference().describe("The order's apiId.");
const customerChanges = z
  .strictObject({
    email: z.email().max(254).nullable().optional(),
    externalId: optionalText(),
    firstName: optionalText(),
    lastName: optionalText(),
    mobilePhone: optionalText(50),
    phone: optionalText(50),
    salutation: optionalText(50),
  })
  .refine((c) => Object.keys(c).length > 0, 'At least one customer field is required.')
  .describe('Only the members given change; null clears one.');
const mappingItem = z.strictObject({ key: wireString().min(1).max(100), value: wireString().max(2000) });

const brandCommandVariants = {
  RefreshOrder: z.strictObject({ ...envelope('RefreshOrder'), orderId }),
  RefreshInvoice: z.strictObject({ ...envelope('RefreshInvoice'), invoiceId: lookupReference() }),
  UpdateCustomer: z.strictObject({ ...envelope('UpdateCustomer'), orderId, customer: customerChanges }),
  UpdateOrderExternalId: z.strictObject({ ...envelope('UpdateOrderExternalId'), orderId, externalId: reference() }),
  UpdateOrderInvoicingExternalId: z.strictObject({
    ...envelope('UpdateOrderInvoicingExternalId'),
    orderId,
    invoicingExternalId: reference(),
  }),
  ApplyCancellation: z.strictObject({
    ...envelope('ApplyCancellation'),
    orderId,
    cancellationReason: wireString().min(1).max(64),
  }),
  CreateOrderFromMapping: z.strictObject({
    ...envelope('CreateOrderFromMapping'),
    orders: z
      .array(z.strictObject({ mapping: z.array(mappingItem).max(500) }))
      .min(1)
      .max(100)
      .describe(
        '1…100 orders, each a list of { key, value } items in your own keys, translated by your order mapping.',
      ),
  }),
} satisfies { [T in BrandCommandType]: z.ZodType };

export const brandCommands = {
  /** The document's view of the body: exactly one of the seven commands. */
  union: z
    .discriminatedUnion(
      '_type',
      Object.entries(brandCommandVariants).map(([type, schema]) =>
        schema.meta({ id: `${type}Command` }),
      ) as unknown as [z.ZodObject, ...z.ZodObject[]],
    )
    .meta({ id: 'BrandCommand' }),
  command: z
    .object({ ...envelope('RefreshOrder'), _type: wireString() })
    .passthrough()
    .transform((value, ctx): BrandCommand => {
      // Own members only: `toString` or `constructor` name no command.
      const variant = Object.hasOwn(brandCommandVariants, value._type)
        ? brandCommandVariants[value._type as BrandCommandType]
        : undefined;
      if (!variant) {
        ctx.addIssue({
          code: 'custom',
          path: ['_type'],
          message: `_type must be one of ${BRAND_COMMAND_TYPES.join(', ')}.`,
        });
        return z.NEVER;
      }
      const parsed = variant.safeParse(value);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          // Each member the command does not define is named by its own path, as on every other input
          // (server/errors.ts).
          if (issue.code === 'unrecognized_keys') {
            for (const key of issue.keys)
              ctx.addIssue({ code: 'custom', path: [...issue.path, key], message: NOT_A_MEMBER });
          } else ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
        }
        return z.NEVER;
      }
      return parsed.data as BrandCommand;
    }),
  // Documented, not re-checked: the use case builds this answer from the validated command, and accepting is the hot
  // write path (every answer the tests receive is checked against the document instead).
  accepted: z
    .custom<AcceptedAnswer>(() => true)
    .meta({
      override: {
        type: 'object',
        properties: {
          _cid: { type: 'string' },
          _type: { enum: [...BRAND_COMMAND_TYPES] },
          status: { const: 'accepted' },
        },
        required: ['_cid', '_type', 'status'],
        additionalProperties: false,
      },
    }),
  poll: z.object({
    cid: lookupReference().meta({
      description: 'The `_cid` you sent the command with.',
      examples: ['cancel-demo-job-07-0001'],
    }),
  }),
  outcome: commandOutcomeEvent.nullable(),
};

export const commandRoutes = {
  send: {
    meta: {
      roles: ['brand'],
      openapi: {
        method: 'POST',
        path: '/v3/commands',
        tags: ['commands'],
        summary: 'Send a brand command; it runs shortly after',
        description:
          'Answers 202 at once; the command then runs exactly once, and its outcome arrives as a CommandResultEvent ' +
          'or CommandErrorEvent at your endpoint and at GET /v3/commands/{cid}. Idempotent per _cid: the same ' +
          'command again gets the first answer and runs nothing; another body with the same _cid is 409. A refused ' +
          'command (4xx) is not stored.',
        successDescription: 'Accepted: stored, to be run.',
      },
      rest: { status: 202, problems: [409], body: brandCommands.union },
      // Its one write (the command, with its `_cid` taken) is one atomic statement: no transaction around it.
      unit: 'statements',
    },
    input: brandCommands.command,
    output: brandCommands.accepted,
  },
  result: {
    meta: {
      roles: ['brand', 'partner'],
      openapi: {
        method: 'GET',
        path: '/v3/commands/{cid}',
        tags: ['commands'],
        summary: 'The outcome of a command you sent',
        description: 'Brand and partner commands alike. Results are kept for 24 hours after the command ran.',
        successDescription: 'The CommandResultEvent or CommandErrorEvent.',
      },
      rest: { noContent: 'The command is accepted and has not run yet: ask again shortly.', problems: [400, 404] },
    },
    input: brandCommands.poll,
    output: brandCommands.outcome,
  },
} satisfies Record<string, RouteContract>;
