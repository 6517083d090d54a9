// The sign-in: a refresh token from the login mail's link (#refresh=…) or pasted by hand, kept in sessionStorage only
// (closing the tab signs out), exchanged for short access tokens as they are needed (POST /v3/auth/access-token).
import type { components } from './schema';

export type Problem = components['schemas']['Problem'];
export type Role = 'brand' | 'partner';

const KEY = 'portal.refreshToken';
const ACCESS_SECONDS = 900;

let access: { token: string; expiresAt: number; role: Role } | null = null;
let signedOutListener: (message: string) => void = () => {};

/** Takes a refresh token out of the address (`#refresh=<token>`) at once, replacing the history entry that held it. */
export function takeTokenFromAddress(): boolean {
  const match = /^#refresh=([^&]+)/.exec(window.location.hash);
  if (!match) return false;
  history.replaceState(null, '', window.location.pathname + window.location.search + '#/endpoint');
  signIn(decodeURIComponent(match[1]!));
  return true;
}

export const refreshToken = (): string | null => sessionStorage.getItem(KEY);

export function signIn(token: string): void {
  access = null;
  sessionStorage.setItem(KEY, token.trim());
}

export function signOut(message = ''): void {
  access = null;
  sessionStorage.removeItem(KEY);
  signedOutListener(message);
}

export function onSignedOut(listener: (message: string) => void): void {
  signedOutListener = listener;
}

/** The role the service put in the access token (a partner sees orders, a brand commands). */
export const roleOf = (token: string): Role => {
  const part = token.split('.')[1] ?? '';
  const json = JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/'))) as { role?: string };
  return json.role === 'brand' ? 'brand' : 'partner';
};

/** A problem the portal makes itself, when the service could not be reached or answered something else. */
export const localProblem = (detail: string): Problem => ({
  type: 'about:blank', title: 'No answer', status: 0, detail, code: 'SERVICE_UNAVAILABLE', message: detail, requestId: '',
});

export class SignedOut extends Error {}

/** A valid access token (a fresh one when the last is within 30 s of its end); a refused refresh token signs out. */
export async function accessToken(): Promise<{ token: string; role: Role }> {
  if (access && access.expiresAt - Date.now() > 30_000) return access;
  const refresh = refreshToken();
  if (!refresh) throw new SignedOut('Sign in to go on.');
  const response = await fetch('/v3/auth/access-token', {
    method: 'POST',
    headers: { authorization: `Bearer ${refresh}`, 'content-type': 'application/json' },
    body: JSON.stringify({ expires_after: ACCESS_SECONDS }),
  });
  if (response.status === 401) {
    const problem = (await response.json().catch(() => null)) as Problem | null;
    const message = problem?.detail ?? 'The sign-in link was refused.';
    signOut(message);
    throw new SignedOut(message);
  }
  if (!response.ok) {
    const problem = (await response.json().catch(() => null)) as Problem | null;
    throw problem ?? localProblem(`The service answered ${response.status}.`);
  }
  const body = (await response.json()) as { access_token: string; expires_in: number };
  access = { token: body.access_token, expiresAt: Date.now() + body.expires_in * 1000, role: roleOf(body.access_token) };
  return access;
}
