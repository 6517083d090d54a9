import { initTRPC } from '@trpc/server';
import { DomainError } from '../domain/errors.ts';
import type { Context } from './context.ts';
import { GENERIC_INTERNAL_DETAIL, issuesOf, type ProblemCode, problem, retryAfterOf } from './errors.ts';
import type { Meta } from './meta.ts';

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
/** The procedure every step of the request pipeline (server/pipeline/procedures.ts) starts from. */
export const procedure = t.procedure;
