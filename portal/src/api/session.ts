// The sign-in: a refresh token from the login mail's link (#refresh=…) or pasted by hand, kept in sessionStorage only
// (closing the tab signs out), exchanged for short access tokens as they are needed (POST /v3/auth/access-token).
// A link never replaces a session silently: a link of another contact waits (in memory only) until the person agrees.
import type { components } from './schema';
import { askedFor, forgetAskedFor, pageAfterSignIn } from './sign-in-memory';

export type Problem = components['schemas']['Problem'];
export type Role = 'brand' | 'partner';

/**
 * Who a session is: the access token's claims (`role`, `acc` the account, `sub` the contact), and their names as
 * GET /v3/me gives them, where they were asked for (the question before a switch of account).
 */
export type Identity = { role: Role; accountId: string; contactId: string; accountName?: string; email?: string };

const KEY = 'portal.refreshToken';
const ACCESS_SECONDS = 900;

let access: { token: string; expiresAt: number; identity: Identity } | null = null;
let signedOutListener: (message: string) => void = () => {};
let pendingLink: string | null = null;

/**
 * Takes a refresh token out of the address (`#refresh=<token>`) at once, replacing the history entry that held it; the
 * link waits (`pendingLink`) to be checked (checkPendingLink). Answers whether the pending link changed.
 */
export function takeTokenFromAddress(): boolean {
  const match = /^#refresh=([^&]+)/.exec(window.location.hash);
  if (!match) return false;
  const current = refreshToken();
  history.replaceState(
    null,
    '',
    window.location.pathname + window.location.search + (current ? '#/endpoint' : pageAfterSignIn()),
  );
  let token: string;
  try {
    token = decodeURIComponent(match[1]!).trim();
  } catch {
    token = match[1]!.trim();
  }
  if (current === token) return false;
  pendingLink = token;
  return true;
}

let linkListener: () => void = () => {};

/**
 * Takes every sign-in link opened while the portal is open (only the fragment changes: no new page load) out of the
 * address, before the router reads it (called before the router exists, so that these listeners run first), and tells
 * `onLinkOpened`'s listener.
 */
export function watchAddressForLinks(): void {
  const check = () => {
    if (takeTokenFromAddress()) linkListener();
  };
  window.addEventListener('popstate', check);
  window.addEventListener('hashchange', check);
}

export function onLinkOpened(listener: () => void): () => void {
  linkListener = listener;
  return () => {
    linkListener = () => {};
  };
}

export const hasPendingLink = (): boolean => pendingLink !== null;

/** A link's refresh token, checked: the access token its check got, with the names of whom it signs in as. */
export type CheckedLink = Exchanged & { refresh: string };

/**
 * The person agreed: exactly the link that was checked becomes the session, not whatever link is pending by then (a
 * newer one opened meanwhile waits for its own question).
 */
export function acceptLink(link: CheckedLink): void {
  forgetAskedFor(link.identity.email);
  signIn(link.refresh);
  access = link;
  if (pendingLink === link.refresh) pendingLink = null;
}

export function declineLink(link: CheckedLink): void {
  if (pendingLink === link.refresh) pendingLink = null;
}

export const refreshToken = (): string | null => sessionStorage.getItem(KEY);

export function signIn(token: string): void {
  access = null;
  sessionStorage.setItem(KEY, token.trim());
}

export function signOut(message = ''): void {
  access = null;
  pendingLink = null;
  sessionStorage.removeItem(KEY);
  signedOutListener(message);
}

export function onSignedOut(listener: (message: string) => void): void {
  signedOutListener = listener;
}

/** The claims of a token the service just issued (read, not verified: the service is the one that checks them). */
function identityOf(token: string): Identity {
  const part = token.split('.')[1] ?? '';
  const json = JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/'))) as {
    role?: unknown;
    acc?: unknown;
    sub?: unknown;
  };
  return {
    role: json.role === 'brand' ? 'brand' : 'partner',
    accountId: String(json.acc ?? ''),
    contactId: String(json.sub ?? ''),
  };
}

const claimsOf = (token: string): Identity | null => {
  try {
    return identityOf(token);
  } catch {
    return null;
  }
};

const sameIdentity = (a: Pick<Identity, 'accountId' | 'contactId'>, b: Pick<Identity, 'accountId' | 'contactId'>) =>
  a.accountId === b.accountId && a.contactId === b.contactId;

/** A problem the portal makes itself, when the service could not be reached or answered something else. */
export const localProblem = (detail: string): Problem => ({
  type: 'about:blank',
  title: 'No answer',
  status: 0,
  detail,
  code: 'SERVICE_UNAVAILABLE',
  message: detail,
  requestId: '',
});

export class SignedOut extends Error {}

export type Exchanged = { token: string; expiresAt: number; identity: Identity };

/**
 * A refresh token exchanged for an access token, without touching the session: the access token, or why it was refused.
 */
export async function exchange(refresh: string): Promise<Exchanged | { refused: string }> {
  const response = await fetch('/v3/auth/access-token', {
    method: 'POST',
    headers: { authorization: `Bearer ${refresh}`, 'content-type': 'application/json' },
    body: JSON.stringify({ expires_after: ACCESS_SECONDS }),
  });
  if (response.status === 401) {
    const problem = (await response.json().catch(() => null)) as Problem | null;
    return { refused: problem?.detail ?? 'The sign-in link was refused.' };
  }
  if (!response.ok) {
    const problem = (await response.json().catch(() => null)) as Problem | null;
    throw problem ?? localProblem(`The service answered ${response.status}.`);
  }
  const body = (await response.json()) as { access_token: string; expires_in: number };
  return {
    token: body.access_token,
    expiresAt: Date.now() + body.expires_in * 1000,
    identity: identityOf(body.access_token),
  };
}

/** A valid access token (a fresh one when the last is within 30 s of its end); a refused refresh token signs out. */
export async function accessToken(): Promise<Exchanged> {
  if (access && access.expiresAt - Date.now() > 30_000) return access;
  const refresh = refreshToken();
  if (!refresh) throw new SignedOut('Sign in to go on.');
  const answer = await exchange(refresh);
  if ('refused' in answer) {
    signOut(answer.refused);
    throw new SignedOut(answer.refused);
  }
  // The session may have changed while the answer came: keep only the access token of the refresh token still held.
  if (refreshToken() === refresh) access = answer;
  return answer;
}

/** The pending link checked against the open session: what the portal shows next. */
export type LinkCheck =
  | { outcome: 'switched'; identity: Identity; sessionEnded: boolean }
  | { outcome: 'confirm'; link: CheckedLink }
  | { outcome: 'ask'; current: Identity; link: CheckedLink }
  | { outcome: 'refused'; current: Identity; reason: string };

/**
 * A link of the same contact replaces the session at once (a fresher token of the same person); a refused link leaves
 * it as it is; a link of another contact is for the person to decide, and so is a link opened without a session (a
 * new tab) unless this browser asked for it (rememberLinkAskedFor). When the open session itself is refused (expired),
 * the link's token becomes the session, and the portal says so. Only the link this check began with is ever taken or
 * dropped: a link opened while it runs is checked after it.
 */
export async function checkPendingLink(): Promise<LinkCheck> {
  const link = pendingLink!;
  const held = refreshToken();
  // Exchanged directly, not through accessToken(): a refused session must not sign out before the link is weighed.
  const mine = held ? await exchange(held) : { refused: 'Sign in to go on.' };
  const theirs = await exchange(link);
  if ('refused' in theirs) {
    if (pendingLink === link) pendingLink = null;
    if ('refused' in mine) {
      // A newer link opened meanwhile is checked on its own: this one's refusal must not sign it out.
      if (pendingLink === null) signOut(theirs.refused);
      throw new SignedOut(theirs.refused);
    }
    access = mine;
    return {
      outcome: 'refused',
      current: { ...mine.identity, ...(await namesOf(mine.token)) },
      reason: theirs.refused,
    };
  }
  const checked: CheckedLink = {
    ...theirs,
    refresh: link,
    identity: { ...theirs.identity, ...(await namesOf(theirs.token)) },
  };
  if ('refused' in mine || sameIdentity(mine.identity, theirs.identity)) {
    // Without a session of its own person, a link this browser did not ask for is confirmed first (login CSRF: a link
    // someone sent, opened in a new tab, would otherwise sign the person into the sender's account unawares).
    if ('refused' in mine && !askedFor(checked.identity.email)) return { outcome: 'confirm', link: checked };
    if (pendingLink === link) acceptLink(checked);
    // An ended session of someone else (its token's claims, read unverified) is replaced too, and the portal says so.
    const ended =
      'refused' in mine &&
      held !== null &&
      !sameIdentity(claimsOf(held) ?? { accountId: '', contactId: '' }, theirs.identity);
    return { outcome: 'switched', identity: checked.identity, sessionEnded: ended };
  }
  access = mine;
  return { outcome: 'ask', current: { ...mine.identity, ...(await namesOf(mine.token)) }, link: checked };
}

/**
 * The account's name and the contact's e-mail an access token speaks for (GET /v3/me); none when it could not be read.
 */
async function namesOf(token: string): Promise<{ accountName?: string; email?: string }> {
  try {
    const response = await fetch('/v3/me', { headers: { authorization: `Bearer ${token}` } });
    if (!response.ok) return {};
    const me = (await response.json()) as { account: { name: string }; contact: { email: string } };
    return { accountName: me.account.name, email: me.contact.email };
  } catch {
    return {};
  }
}
