import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { ZodType } from 'zod';
import type { Role } from '../domain/account.ts';
import { DomainError } from '../domain/errors.ts';
import type { Deps } from '../domain/ports.ts';
import { admitCaller, identifyCaller } from '../domain/use-cases/authenticate.ts';
import { checkCommandSignature } from '../domain/use-cases/check-command-signature.ts';
import type { Context } from './context.ts';
import { bearerToken, isAdmin } from './credentials.ts';
import { GENERIC_INTERNAL_DETAIL, isGone, issuesOf, problem, restGone, retryAfterOf, translateError, type ProblemCode } from './errors.ts';

export type ProblemStatus = 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 429 | 500 | 503;

/**
 * `roles` is set by the guarded base procedures below, so that tests and tools can see who may call what.
 * `rest` tells the REST face what the schemas cannot: the success status, the bearer an open procedure takes,
 * and the problems it may answer beyond those every operation of its kind may (401 when guarded; 400, 413 and
 * 415 with a body; 500).
 */
export type Meta = OpenApiMeta & {
  roles?: readonly Role[];
  rest?: {
    status?: 200 | 202;
    /** The operation answers 204 without a body when its procedure answers null; this says when. */
    noContent?: string;
    bearer?: 'refresh';
    problems?: readonly ProblemStatus[];
    /** What the document shows as the body, when the input schema cannot say it (a union behind an envelope); it has a meta id. */
    body?: ZodType;
    /** The body names exactly one of these members (a rule zod checks in a refinement, which the document cannot see). */
    exactlyOneOf?: readonly string[];
  };
  /**
   * How the use case runs in the request's unit of work: by default a mutation in one transaction, a query as
   * statements; `statements` for a mutation that writes nothing, or whose one write is a single atomic statement.
   */
  unit?: 'transaction' | 'statements';
};

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    isDev: false,
    errorFormatter({ shape, error, ctx }) {
      const internal = error.code === 'INTERNAL_SERVER_ERROR';
      const message = internal ? GENERIC_INTERNAL_DETAIL : shape.message;
      const issues = issuesOf(error);
      if (ctx?.transport === 'trpc') {
        // Typed clients parse tRPC's own shape: keep it, minus any exception text.
        // `reason`: the domain's own code, where tRPC's is coarser (GONE travels as NOT_FOUND).
        const reason = error.cause instanceof DomainError ? error.cause.code : undefined;
        return { ...shape, message, data: { ...shape.data, stack: undefined, issues, reason, retryAfter: retryAfterOf(error) } };
      }
      const code = error.code as ProblemCode;
      return problem(code, code === 'GONE' ? 410 : shape.data.httpStatus, message, { issues, requestId: ctx?.requestId });
    },
  });

export const router = t.router;
export const middleware = t.middleware;

/**
 * trpc-to-openapi hands path parameters over as they stand in the URL: decode them, on the REST face only (a typed
 * client sends them as they are), so that `/v3/commands/a%20b` names the `_cid` "a b" and `%2A` is "*".
 */
function decodedPathParameters(path: string | undefined, getRawInput: () => Promise<unknown>) {
  const names = [...(path ?? '').matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  return async () => {
    const raw = await getRawInput();
    if (names.length === 0 || typeof raw !== 'object' || raw === null) return raw;
    const decoded: Record<string, unknown> = { ...raw };
    for (const name of names) {
      const value = decoded[name];
      if (typeof value !== 'string') continue;
      try { decoded[name] = decodeURIComponent(value); } catch { /* not a valid escape: the schema judges it as it is */ }
    }
    return decoded;
  };
}

/** Every procedure: REST path parameters decoded, and domain errors and schema issues translated once, here. */
export const baseProcedure = t.procedure.use(async ({ ctx, meta, getRawInput, next }) => {
  const result = ctx.transport === 'rest' && meta?.openapi?.path.includes('{')
    ? await next({ getRawInput: decodedPathParameters(meta.openapi.path, getRawInput) })
    : await next();
  if (!result.ok) {
    const error = translateError(result.error);
    throw ctx.transport === 'rest' && isGone(error) ? restGone(error) : error;
  }
  return result;
});

/**
 * The use case's part of the request's unit of work, handed to the procedure as `ctx.deps`; a procedure that fails
 * undoes what its transaction did (its error, thrown, rolls it back, and the unit translates what it knows).
 */
const inUnitOfWork = middleware(async ({ ctx, meta, type, next }) => {
  const proceed = (deps: Deps) => next({ ctx: { deps } });
  let outcome: Awaited<ReturnType<typeof proceed>> | undefined;
  await ctx.unit[meta?.unit ?? (type === 'mutation' ? 'transaction' : 'statements')](async (deps) => {
    outcome = await proceed(deps);
    if (!outcome.ok) throw outcome.error;
  });
  return outcome!;
});

export const adminProcedure = baseProcedure.use(({ ctx, next }) => {
  if (!isAdmin(ctx.authorization, ctx.services.config.adminToken)) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'A valid admin token is required.' });
  return next();
}).use(inUnitOfWork);

/** The body, once it may be read: malformed JSON is raised here, after whatever checks come before the body. */
const bodyReadable = middleware(({ ctx, next }) => {
  if (ctx.bodyProblem) throw new TRPCError(ctx.bodyProblem);
  return next();
});

// Token first, before any input is read: a bad token beats a bad body.
const authenticated = (roles: readonly Role[]) =>
  baseProcedure.meta({ roles }).use(async ({ ctx, next }) => {
    const caller = await ctx.unit.statements((deps) => identifyCaller(deps, { accessToken: bearerToken(ctx.authorization), roles }));
    // The count and the rest run in the caller's account's lane: a tenant's burst queues there (the count of one account
    // queues on one row) instead of taking the pool from everyone; once its share is used up, the waiting ones are
    // refused as they come out, without a round trip.
    return ctx.services.fairUse.admit(
      caller.accountId,
      () => ctx.unit.statements((deps) => admitCaller(deps, caller)),
      (principal) => next({ ctx: { principal } }),
    );
  });

/** Endpoints open to anyone (the two login steps). */
export const publicProcedure = baseProcedure.use(bodyReadable).use(inUnitOfWork);
export const partnerProcedure = authenticated(['partner']).use(bodyReadable).use(inUnitOfWork);
export const brandProcedure = authenticated(['brand']).use(bodyReadable).use(inUnitOfWork);
export const integratorProcedure = authenticated(['brand', 'partner']).use(bodyReadable).use(inUnitOfWork);

/** Partner commands: token first, then the signature over the raw bytes, and only then the body (CONTRACT §5). */
export const signedPartnerProcedure = authenticated(['partner'])
  .use(async ({ ctx, next }) => {
    await ctx.unit.statements((deps) => checkCommandSignature(deps, ctx.principal, { rawBody: ctx.rawBody, signature: ctx.signature }));
    return next();
  })
  .use(bodyReadable)
  .use(inUnitOfWork);
