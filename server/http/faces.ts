import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type express from 'express';
import type { Request } from 'express';
import type { Issue } from '../../domain/errors.ts';
import { type ProblemCode, problem, trpcFailure } from '../errors.ts';

/**
 * Which face a request was asked on, by its path (without the query): tRPC's at `/trpc` and under it, answered in
 * tRPC's shape (the procedure's path, '' for `/trpc` itself), else REST's, answered in a problem (null).
 */
export function trpcProcedureOf(path: string): string | null {
  if (path === '/trpc') return '';
  return path.startsWith('/trpc/') ? path.slice('/trpc/'.length) : null;
}

/**
 * One failure answered outside any procedure, in the shape of the face it was asked on (tRPC's at /trpc, else a
 * problem).
 */
export function answerEdgeFailure(
  req: Request,
  res: express.Response,
  status: number,
  code: ProblemCode,
  detail: string,
  issues?: Issue[],
) {
  // originalUrl: inside the middleware mounted at /trpc, `path` has lost its prefix.
  const procedure = trpcProcedureOf(req.originalUrl.split('?')[0]!);
  if (procedure !== null) {
    res
      .status(status)
      .json(trpcFailure(procedure, status, code as TRPC_ERROR_CODE_KEY, detail, { issues, requestId: String(req.id) }));
    return;
  }
  res
    .status(status)
    .type('application/problem+json')
    .send(JSON.stringify(problem(code, status, detail, { issues, requestId: String(req.id) })));
}
