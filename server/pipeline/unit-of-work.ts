import type { Deps } from '../../domain/ports.ts';
import type { Context } from '../context.ts';
import type { Meta } from '../meta.ts';

/**
 * The use case's part of the request's unit of work, handed to the procedure as `deps`: by default a mutation in one
 * transaction, a query as statements (meta `unit`). A procedure that fails undoes what its transaction did (its error,
 * thrown, rolls it back, and the unit translates what it knows).
 */
export async function inUnitOfWork<R extends { ok: boolean; error?: unknown }>(
  ctx: Context,
  meta: Meta | undefined,
  type: string,
  proceed: (deps: Deps) => Promise<R>,
): Promise<R> {
  let outcome: R | undefined;
  await ctx.unit[meta?.unit ?? (type === 'mutation' ? 'transaction' : 'statements')](async (deps) => {
    outcome = await proceed(deps);
    if (!outcome.ok) throw outcome.error;
  });
  return outcome!;
}
