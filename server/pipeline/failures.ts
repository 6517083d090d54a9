import type { TRPCError } from '@trpc/server';
import type { Context } from '../context.ts';
import { translateError } from '../errors.ts';
import { isGone, restGone } from '../http/trpc-to-openapi-workarounds.ts';

/** A procedure's failure as its face answers it: domain errors and schema issues translated once, here. */
export function failureFor(ctx: Context, error: TRPCError): TRPCError {
  const translated = translateError(error);
  return ctx.transport === 'rest' && isGone(translated) ? restGone(translated) : translated;
}
