// The operator console's client: tRPC's own, typed by the service's router (the typed RPC face internal tools use), so
// that every input and answer here is the procedure's own type. Only the type crosses over: the build erases it.
// @trpc/client is the service's own package (found in the project's node_modules, above the portal's), so the client
// and the router are always of one tRPC version.
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../../server/routers/index.ts';
import type { Problem } from '../api/session';

export type Admin = ReturnType<typeof adminClient>;
/** What each admin procedure answers, by its path: `Answers['deliveries']['get']`. */
export type Answers = inferRouterOutputs<AppRouter>['admin'];
/** What each admin procedure takes, by its path: `Inputs['webhookConfigs']['list']`. */
export type Inputs = inferRouterInputs<AppRouter>['admin'];

const KEY = 'operator.adminToken';

/** The token of this tab's session: sessionStorage only, gone with the tab, never in the address or a cookie. */
export const storedToken = () => sessionStorage.getItem(KEY);
export const storeToken = (token: string) => sessionStorage.setItem(KEY, token);
export const forgetToken = () => sessionStorage.removeItem(KEY);

export function adminClient(token: string, onRefused: () => void) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: '/trpc',
        headers: () => ({ authorization: `Bearer ${token}` }),
        // A token refused mid-session (ADMIN_TOKEN changed): back to sign-in.
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          if (response.status === 401) onRefused();
          return response;
        },
      }),
    ],
  }).admin;
}

/** The call's answer, or its refusal as the portal shows problems (ProblemBox): the service's message and code. */
export async function call<T>(promise: Promise<T>): Promise<T> {
  try {
    return await promise;
  } catch (error) {
    if (!(error instanceof TRPCClientError)) throw error;
    // The /trpc face's error data (server/trpc.ts's formatter): tRPC types it as its default shape, since the
    // formatter answers REST's problems too; these are the members it adds. None when no answer came.
    const data = (error.data ?? {}) as {
      code?: string;
      httpStatus?: number;
      requestId?: string;
      issues?: Problem['issues'];
    };
    const problem: Problem = {
      type: 'about:blank',
      title: data.code ?? 'No answer',
      status: data.httpStatus ?? 0,
      detail: data.httpStatus ? error.message : 'The service could not be reached.',
      code: (data.code ?? 'SERVICE_UNAVAILABLE') as Problem['code'],
      message: error.message,
      requestId: data.requestId ?? '',
      ...(data.issues && { issues: data.issues }),
    };
    throw problem;
  }
}
