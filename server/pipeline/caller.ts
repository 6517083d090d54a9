import { TRPCError } from '@trpc/server';
import type { Role } from '../../domain/account.ts';
import type { Principal } from '../../domain/auth.ts';
import { admitCaller, identifyCaller } from '../../domain/use-cases/authenticate.ts';
import type { Context } from '../context.ts';
import { adminRefusal, bearerToken, isAdmin } from './credentials.ts';

// The token step (CONTRACT §5 first): the caller of an access token, counted and run in its account's lane; or the
// admin token of the operators' procedures.

/**
 * The caller of the token, then its count and `work` in its account's lane: a tenant's burst queues there (the count of
 * one account queues on one row) instead of taking the pool from everyone; once its share is used up, the waiting ones
 * are refused as they come out, without a round trip. Token first, before any input is read: a bad token beats a bad
 * body.
 */
export async function asCaller<T>(
  ctx: Context,
  roles: readonly Role[],
  work: (principal: Principal) => Promise<T>,
): Promise<T> {
  const caller = await ctx.unit.statements((deps) =>
    identifyCaller(deps, { accessToken: bearerToken(ctx.authorization), roles }),
  );
  return ctx.services.fairUse.admit(
    caller.accountId,
    () => ctx.unit.statements((deps) => admitCaller(deps, caller)),
    work,
  );
}

export function requireAdmin(ctx: Context): void {
  const { adminToken } = ctx.services.config;
  if (!isAdmin(ctx.authorization, adminToken))
    throw new TRPCError({ code: 'UNAUTHORIZED', message: adminRefusal(adminToken) });
}
