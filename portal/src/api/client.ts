// The typed client of /v3: paths and bodies come from schema.d.ts, generated from the service's own /openapi.json at
// install and before each type check (npm run portal:api-types), so a change of the API the portal does not follow
// fails it.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';
import { accessToken, localProblem, type Problem, SignedOut, signOut } from './session';

const bearer: Middleware = {
  async onRequest({ request }) {
    if (request.url.includes('/v3/auth/')) return request;
    const { token } = await accessToken();
    request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
  async onResponse({ request, response }) {
    // An access token refused (access withdrawn, key changed): back to sign-in with the service's message.
    if (response.status === 401 && !request.url.includes('/v3/auth/')) {
      const problem = (await response
        .clone()
        .json()
        .catch(() => null)) as Problem | null;
      signOut(problem?.detail ?? 'Your sign-in is no longer accepted.');
    }
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: '/' });
api.use(bearer);

/** A call's data, or its problem thrown (the service's problem+json, or one of ours when none came). */
export async function call<T>(promise: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await promise;
  } catch (error) {
    if (error instanceof SignedOut) throw error;
    throw localProblem(error instanceof Error ? error.message : 'The service could not be reached.');
  }
  if (result.error !== undefined) throw asProblem(result.error, result.response);
  return result.data as T;
}

function asProblem(error: unknown, response?: Response): Problem {
  if (error && typeof error === 'object' && 'detail' in error) return error as Problem;
  return localProblem(`The service answered ${response?.status ?? 'nothing'}.`);
}
