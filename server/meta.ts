import type { OpenApiMeta } from 'trpc-to-openapi';
import type { ZodType } from 'zod';
import type { Role } from '../domain/account.ts';

export type ProblemStatus = 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 429 | 500 | 503;

/**
 * `roles`: who may call a guarded procedure (server/pipeline/procedures.ts checks them), written in its route
 * (server/routers/contracts.ts) so that the fair-use door, the document and tests can see who may call what.
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
    /**
     * What the document shows as the body, when the input schema cannot say it (a union behind an envelope); it has a
     * meta id.
     */
    body?: ZodType;
    /**
     * The body names exactly one of these members (a rule zod checks in a refinement, which the document cannot see).
     */
    exactlyOneOf?: readonly string[];
  };
  /**
   * How the use case runs in the request's unit of work: by default a mutation in one transaction, a query as
   * statements; `statements` for a mutation that writes nothing, or whose one write is a single atomic statement;
   * `replica` for the reads of CONTRACT §12, which a read replica may answer.
   */
  unit?: 'transaction' | 'statements' | 'replica';
};
