import { z } from 'zod';
import type { JobIdentifier } from '../../domain/command.ts';
import { lookupReference, reference, wireString } from '../wire-text.ts';

// What the contracts of several routers share. Each router's wire contract stands beside it (`<router>.contract.ts`):
// everything is checked there; the domain receives plain values.

// Ids are references like any other: one of another shape names nothing, and is answered as not found (CONTRACT §3).
export const id = lookupReference();
export const text = (max = 200) => wireString().trim().min(1).max(max);
export const optionalText = (max = 200) => wireString().max(max).nullable().optional();

/** ISO 8601 with a time and an offset (`Z` or ±hh:mm), as a Date (CONTRACT §5). */
export const dateTime = z.iso.datetime({ offset: true }).transform((value) => new Date(value));

/**
 * A body field that must arrive as a JSON number or boolean. trpc-to-openapi switches on zod's `coerce` for
 * plain number and boolean fields of every REST input, which would take "60" for 60 and "false" for true;
 * it leaves pipes alone, and the documented type stays the left-hand side's.
 */
export const exactNumber = (schema: z.ZodNumber) => schema.pipe(z.number());
export const exactBoolean = () => z.boolean().pipe(z.boolean());

/**
 * Whole numbers in answers, with their true bounds: zod's `.int()` alone documents JavaScript's safe range,
 * `minimum: -9007199254740991`, which generators read as a signed 64-bit field. A count has no bound above but that
 * one.
 */
export const count = () =>
  z
    .number()
    .int()
    .min(0)
    .meta({ override: { maximum: undefined } });
/** An HTTP status as the receiver sent it: three digits (the parser takes any, 000 to 999). */
export const httpStatus = () => z.number().int().min(0).max(999);

/**
 * A whole number in a query string, strictly: digits only, no coercion of "1.5", "1e3" or " 2". Digits past what a
 * JavaScript number holds exactly are taken as the largest it does: a page, a size or an offset that large answers as
 * the true one would (nothing stores that many orders).
 */
export const queryInt = (min: number, description: string) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform((digits) => Math.min(Number(digits), Number.MAX_SAFE_INTEGER))
    .pipe(z.number().int().min(min))
    .meta({ description, override: { type: 'integer', minimum: min, pattern: undefined } });
/**
 * A boolean in a query string: `true`, `1`, `false` or `0`. Documented as a boolean, which generated clients write as
 * `true` and `false`.
 */
export const queryBool = (description: string) =>
  z
    .enum(['true', '1', 'false', '0'])
    .transform((v) => v === 'true' || v === '1')
    .meta({ description, override: { type: 'boolean', enum: undefined } });
/** A whole number in a query string within bounds: beyond them is a 400 that names them. */
export const boundedQueryInt = (min: number, max: number, description: string) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .meta({ description, override: { type: 'integer', minimum: min, maximum: max, pattern: undefined } });

export const IDENTIFIERS = ['jobApiId', 'invoicingEid', 'gidOrderNumber', 'yourOrderID'] as const;
export const envelope = <T extends string>(type: T) => ({
  _v: z.literal('1.0.0'),
  _cid: reference(),
  _type: z.literal(type),
  // Bounded as Stripe bounds its metadata: it is echoed in the command's result event, which is kept and delivered.
  _metadata: z
    .record(wireString().max(40).regex(/^ext-/, 'metadata keys start with "ext-"'), wireString().max(500))
    .refine((entries) => Object.keys(entries).length <= 50, 'at most 50 entries')
    .optional()
    .describe('Up to 50 entries: keys "ext-…" of up to 40 characters, string values of up to 500.'),
});
export const identifier = lookupReference().optional();

/** Exactly one of the identifiers a command accepts (CONTRACT §5). */
export const exactlyOne = (keys: readonly string[]) => (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
  const given = keys.filter((k) => value[k] !== undefined);
  if (given.length !== 1) {
    ctx.addIssue({
      code: 'custom',
      path: given.length ? given.slice(1) : [],
      message: `Exactly one of ${keys.join(', ')} is required; ${given.length} given.`,
    });
  }
};

export type IdentifierFields = {
  jobApiId?: string;
  invoicingEid?: string;
  gidOrderNumber?: string;
  yourOrderID?: string;
};

// The refinement has made sure that exactly one identifier is present.
export function identifierOf(input: IdentifierFields): JobIdentifier {
  if (input.jobApiId !== undefined) return { kind: 'jobApiId', value: input.jobApiId };
  if (input.invoicingEid !== undefined) return { kind: 'invoicingEid', value: input.invoicingEid };
  if (input.gidOrderNumber !== undefined) return { kind: 'gidOrderNumber', value: input.gidOrderNumber };
  return { kind: 'yourOrderID', value: input.yourOrderID! };
}

export const envelopeOf = <T extends { _v: '1.0.0'; _cid: string; _metadata?: Record<string, string> }>(v: T) => ({
  _v: v._v,
  _cid: v._cid,
  ...(v._metadata !== undefined && { _metadata: v._metadata }),
});
