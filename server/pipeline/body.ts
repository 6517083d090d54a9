import { TRPCError } from '@trpc/server';
import type { Context } from '../context.ts';
import { validationError } from '../errors.ts';

/**
 * The body, once it may be read: a body no operation takes, as the body's rules (json-body.ts) found it before any
 * procedure ran, is raised here, after whatever checks come before the body.
 */
export function checkBody(ctx: Context): void {
  const problem = ctx.bodyProblem;
  if (problem) throw problem.issues ? validationError(problem.issues, problem.message) : new TRPCError(problem);
}
