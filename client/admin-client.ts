// The typed client of internal tools: the service's tRPC router, over HTTP, with failures as values.
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { AppRouter } from '../server/routers/index.ts';

export type { AppRouter };

/**
 * Why a call was refused: tRPC's code (CONFLICT, NOT_FOUND, BAD_REQUEST, UNAUTHORIZED, …), its HTTP status and text.
 */
export interface AdminError {
  code: TRPC_ERROR_CODE_KEY | 'NETWORK';
  httpStatus: number | null;
  message: string;
  /** On BAD_REQUEST: every problem found in the input. */
  issues: { path: string; message: string }[];
  /** The service's own reason where tRPC's code is coarser (GONE travels as NOT_FOUND). */
  reason: string | null;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: AdminError };

/**
 * `createAdminClient(url, token).admin.accounts.create.mutate({ … })` and so on, typed from the router itself: an input
 * of the wrong shape does not compile. Wrap a call in `outcome(…)` to get failures as values to branch on
 * (`if (!r.ok && r.error.code === 'CONFLICT')`) instead of exceptions.
 */
export function createAdminClient(url: string, token: string) {
  // Relative to the URL given, so that a service behind a path prefix (https://host/api/) is reached at /api/trpc.
  const base = new URL('trpc', url.endsWith('/') ? url : `${url}/`).toString();
  return createTRPCClient<AppRouter>({
    links: [httpLink({ url: base, headers: { authorization: `Bearer ${token}` }, fetch: namingFailures(base) })],
  });
}

/**
 * fetch whose failure to reach the service says where and why ("could not reach http://…/trpc: ECONNREFUSED"), not
 * undici's bare "fetch failed", whose reason hides in `cause`.
 */
const namingFailures =
  (base: string): typeof fetch =>
  async (input, init) => {
    try {
      return await fetch(input, init);
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new Error(`could not reach ${base}: ${reasonOf(error)}`, { cause: error });
    }
  };

/**
 * The innermost cause's code and text (`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1`), else the error's own text.
 */
function reasonOf(error: unknown): string {
  let inner = error as { message?: string; code?: string; cause?: unknown };
  while (inner.cause && typeof inner.cause === 'object') inner = inner.cause as typeof inner;
  // Several addresses tried (localhost: ::1, then 127.0.0.1): an AggregateError whose own message is empty.
  const errors = (inner as { errors?: { message?: string }[] }).errors;
  const text = inner.message || errors?.map((e) => e.message).join('; ') || String(inner);
  return inner.code && !text.startsWith(inner.code) ? `${inner.code} (${text})` : text;
}

export type AdminClient = ReturnType<typeof createAdminClient>;

/** The call's value, or why it was refused; errors that are not the service's answer (a bug here) still throw. */
export async function outcome<T>(call: Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await call };
  } catch (error) {
    if (!(error instanceof TRPCClientError)) throw error;
    const data = (error.data ?? null) as {
      code?: TRPC_ERROR_CODE_KEY;
      httpStatus?: number;
      issues?: AdminError['issues'];
      reason?: string;
    } | null;
    return {
      ok: false,
      error: {
        code: data?.code ?? 'NETWORK',
        httpStatus: data?.httpStatus ?? null,
        message: error.message,
        issues: data?.issues ?? [],
        reason: data?.reason ?? null,
      },
    };
  }
}
