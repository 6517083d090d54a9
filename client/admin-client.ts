// The typed client of internal tools: the service's tRPC router, over HTTP, with failures as values.
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { AppRouter } from '../server/routers/index.ts';

export type { AppRouter };

/** Why a call was refused: tRPC's code (CONFLICT, NOT_FOUND, BAD_REQUEST, UNAUTHORIZED, …), its HTTP status and text. */
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
  return createTRPCClient<AppRouter>({
    // Relative to the URL given, so that a service behind a path prefix (https://host/api/) is reached at /api/trpc.
    links: [httpLink({ url: new URL('trpc', url.endsWith('/') ? url : `${url}/`).toString(), headers: { authorization: `Bearer ${token}` } })],
  });
}

export type AdminClient = ReturnType<typeof createAdminClient>;

/** The call's value, or why it was refused; errors that are not the service's answer (a bug here) still throw. */
export async function outcome<T>(call: Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await call };
  } catch (error) {
    if (!(error instanceof TRPCClientError)) throw error;
    const data = (error.data ?? null) as { code?: TRPC_ERROR_CODE_KEY; httpStatus?: number; issues?: AdminError['issues']; reason?: string } | null;
    const cause = data ? '' : ` (${(error.cause as Error | undefined)?.message ?? 'no answer'})`;
    return {
      ok: false,
      error: { code: data?.code ?? 'NETWORK', httpStatus: data?.httpStatus ?? null, message: `${error.message}${cause}`, issues: data?.issues ?? [], reason: data?.reason ?? null },
    };
  }
}
