import type { Role } from '../../domain/account.ts';
import { decodedPathParameters } from '../http/trpc-to-openapi-workarounds.ts';
import type { Meta } from '../meta.ts';
import { procedure } from '../trpc.ts';
import { checkBody } from './body.ts';
import { asCaller, requireAdmin } from './caller.ts';
import { failureFor } from './failures.ts';
import { withOutcomeLogged } from './outcome-log.ts';
import { checkSignature } from './signature.ts';
import { inUnitOfWork } from './unit-of-work.ts';

// The request pipeline's procedures: each composes the steps of this folder in the order CONTRACT §5 fixes (token,
// signature, body, then the use case in the request's unit of work). Fair use comes before them all: the door
// (door.ts) before express, the account's lane (lanes.ts) around the rest.

/** Under every procedure: REST path parameters decoded, failures translated once (failures.ts). */
export const baseProcedure = procedure.use(async ({ ctx, meta, getRawInput, next }) => {
  const getDecoded = decodedPathParameters(ctx, meta, getRawInput);
  // A /trpc batch runs several procedures on one context: each takes a unit of work of its own (a REST request is one).
  const result = await (ctx.transport === 'trpc'
    ? next({ ctx: { unit: ctx.services.unitOfWork(ctx.trace) } })
    : getDecoded
      ? next({ getRawInput: getDecoded })
      : next());
  if (!result.ok) throw failureFor(ctx, result.error);
  return result;
});

/** The roles a guarded route admits: its route's meta names them (server/routers/contracts.ts), the one place. */
function rolesOf(meta: Meta | undefined, path: string): readonly Role[] {
  if (!meta?.roles?.length) throw new Error(`the route of ${path} names no roles: a guarded procedure needs them`);
  return meta.roles;
}

/**
 * The steps after the base, in one tRPC middleware per kind of procedure (each `next({ ctx })` copies the context),
 * each step a function of this folder: the caller and its lane (caller.ts), the signature of a partner command
 * (signature.ts) with its outcome line (outcome-log.ts), the body (body.ts), then the use case in the request's unit
 * of work (unit-of-work.ts).
 */
const guarded = (signed: boolean) =>
  baseProcedure.use(({ ctx, meta, type, path, getRawInput, next }) =>
    asCaller(ctx, rolesOf(meta, path), (principal) => {
      const run = async () => {
        if (signed) await checkSignature(ctx, principal);
        checkBody(ctx);
        return inUnitOfWork(ctx, meta, type, (deps) => next({ ctx: { principal, deps } }));
      };
      return signed ? withOutcomeLogged(ctx, principal, path, getRawInput, run) : run();
    }),
  );

/** Endpoints open to anyone (the two login steps). */
export const publicProcedure = baseProcedure.use(({ ctx, meta, type, next }) => {
  checkBody(ctx);
  return inUnitOfWork(ctx, meta, type, (deps) => next({ ctx: { deps } }));
});
/** The operators' procedures: typed RPC only (no REST route), whose inputs tRPC reads itself; no body step to take. */
export const adminProcedure = baseProcedure.use(({ ctx, meta, type, next }) => {
  requireAdmin(ctx);
  return inUnitOfWork(ctx, meta, type, (deps) => next({ ctx: { deps } }));
});
/** An integrator's procedures: an access token of a role its route admits (meta `roles`). */
export const guardedProcedure = guarded(false);
/** Partner commands: token first, then the signature over the raw bytes, and only then the body (CONTRACT §5). */
export const signedProcedure = guarded(true);
