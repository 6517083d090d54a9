import { TRPCError } from '@trpc/server';
import type { Role } from '../domain/account.ts';
import type { Principal } from '../domain/auth.ts';
import { DomainError } from '../domain/errors.ts';
import type { Deps } from '../domain/ports.ts';
import { admitCaller, identifyCaller } from '../domain/use-cases/authenticate.ts';
import { checkCommandSignature } from '../domain/use-cases/check-command-signature.ts';
import type { Context } from './context.ts';
import { adminRefusal, bearerToken, isAdmin } from './credentials.ts';
import { translateError, validationError } from './errors.ts';
import { isGone, restGone } from './http/trpc-to-openapi-workarounds.ts';
import type { Meta } from './meta.ts';
import { partnerCommands } from './routers/partner-commands.contract.ts';

// The steps the base procedures of trpc.ts take, in the order the contract fixes (CONTRACT §5: token, signature, body,
// then the use case), each against the request's one unit of work.

/** A procedure's failure as its face answers it: domain errors and schema issues translated once, here. */
export function failureFor(ctx: Context, error: TRPCError): TRPCError {
  const translated = translateError(error);
  return ctx.transport === 'rest' && isGone(translated) ? restGone(translated) : translated;
}

export function requireAdmin(ctx: Context): void {
  const { adminToken } = ctx.services.config;
  if (!isAdmin(ctx.authorization, adminToken))
    throw new TRPCError({ code: 'UNAUTHORIZED', message: adminRefusal(adminToken) });
}

/**
 * The caller of the token, then its count and `work` in its account's lane: a tenant's burst queues there (the count of
 * one account queues on one row) instead of taking the pool from everyone; once its share is used up, the waiting ones
 * are refused as they come out, without a round trip. Token first, before any input is read: a bad token beats a bad body.
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

/** Partner commands: the signature over the raw bytes, before the body is read (CONTRACT §5). */
export function checkSignature(ctx: Context, principal: Principal): Promise<void> {
  return ctx.unit.statements((deps) =>
    checkCommandSignature(deps, principal, { rawBody: ctx.rawBody, signature: ctx.signature }),
  );
}

/**
 * A partner command, its outcome logged in one line whatever ends it after the token (the signature included), as the
 * executor logs a brand command's: its `_cid` (in the fields, never in the message: it is the sender's text), the
 * account, the command and its outcome or error code; never the body, and its `_cid` and `_type` only as the schema
 * would take them.
 */
export async function withOutcomeLogged<T>(
  ctx: Context,
  principal: Principal,
  path: string,
  getRawInput: () => Promise<unknown>,
  run: () => Promise<T>,
): Promise<T> {
  const log = async (failure: unknown) => {
    const body = partnerCommands.logged.parse(await getRawInput().catch(() => undefined));
    const error =
      failure === null
        ? undefined
        : translateError(
            failure instanceof TRPCError ? failure : new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: failure }),
          );
    const code = error && (error.cause instanceof DomainError ? error.cause.code : error.code);
    ctx.log.info(
      {
        _cid: body._cid,
        account: principal.accountId,
        type: body._type ?? path,
        outcome: code ? 'failed' : 'succeeded',
        ...(code && { code }),
      },
      code ? `partner command failed: ${code}` : 'partner command succeeded',
    );
  };
  try {
    const result = await run();
    await log(null);
    return result;
  } catch (error) {
    await log(error);
    throw error;
  }
}

/** The body, once it may be read: a body no operation takes is raised here, after whatever checks come before the body. */
export function checkBody(ctx: Context): void {
  const problem = ctx.bodyProblem;
  if (problem) throw problem.issues ? validationError(problem.issues, problem.message) : new TRPCError(problem);
}

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
