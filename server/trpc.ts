import { initTRPC } from '@trpc/server';
import type { Role } from '../domain/account.ts';
import { DomainError } from '../domain/errors.ts';
import type { Context } from './context.ts';
import { GENERIC_INTERNAL_DETAIL, issuesOf, problem, retryAfterOf, type ProblemCode } from './errors.ts';
import type { Meta } from './meta.ts';
import { decodedPathParameters } from './http/trpc-to-openapi-workarounds.ts';
import {
  asCaller,
  checkBody,
  checkSignature,
  failureFor,
  inUnitOfWork,
  requireAdmin,
  withOutcomeLogged,
} from './request-steps.ts';

export type { Meta, ProblemStatus } from './meta.ts';

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    isDev: false,
    errorFormatter({ shape, error, ctx }) {
      const internal = error.code === 'INTERNAL_SERVER_ERROR';
      const message = internal ? GENERIC_INTERNAL_DETAIL : shape.message;
      const issues = issuesOf(error);
      // Without a context the failure came before any procedure on /trpc (REST bodies are read, and refused, before).
      if (ctx?.transport !== 'rest') {
        // Typed clients parse tRPC's own shape: keep it, minus any exception text.
        // `reason`: the domain's own code, where tRPC's is coarser (GONE travels as NOT_FOUND).
        const reason = error.cause instanceof DomainError ? error.cause.code : undefined;
        return {
          ...shape,
          message,
          data: {
            ...shape.data,
            stack: undefined,
            issues,
            reason,
            retryAfter: retryAfterOf(error),
            requestId: ctx?.requestId,
          },
        };
      }
      const code = error.code as ProblemCode;
      return problem(code, code === 'GONE' ? 410 : shape.data.httpStatus, message, {
        issues,
        requestId: ctx?.requestId,
      });
    },
  });

export const router = t.router;

/** Under every procedure: REST path parameters decoded, failures translated once (server/request-steps.ts). */
export const baseProcedure = t.procedure.use(async ({ ctx, meta, getRawInput, next }) => {
  const getDecoded = decodedPathParameters(ctx, meta, getRawInput);
  // A /trpc batch runs several procedures on one context: each takes a unit of work of its own (a REST request is one).
  const result = await (ctx.transport === 'trpc'
    ? next({ ctx: { unit: ctx.services.unitOfWork() } })
    : getDecoded
      ? next({ getRawInput: getDecoded })
      : next());
  if (!result.ok) throw failureFor(ctx, result.error);
  return result;
});

/**
 * The steps after the base, in one middleware per kind of procedure (each `next({ ctx })` copies the context): the
 * caller and its lane, the signature of a partner command, the body, then the use case in the request's unit of work.
 */
const guarded = (roles: readonly Role[], signed = false) =>
  baseProcedure.meta({ roles }).use(({ ctx, meta, type, path, getRawInput, next }) =>
    asCaller(ctx, roles, (principal) => {
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
export const adminProcedure = baseProcedure.use(({ ctx, meta, type, next }) => {
  requireAdmin(ctx);
  return inUnitOfWork(ctx, meta, type, (deps) => next({ ctx: { deps } }));
});
export const partnerProcedure = guarded(['partner']);
export const brandProcedure = guarded(['brand']);
export const integratorProcedure = guarded(['brand', 'partner']);
/** Partner commands: token first, then the signature over the raw bytes, and only then the body (CONTRACT §5). */
export const signedPartnerProcedure = guarded(['partner'], true);
