// What this browser remembers for a sign-in link, in localStorage as the link opens in another tab (addresses only,
// never a token): the e-mail addresses it asked a link for, and the page asked for while signed out.
const ASKED_KEY = 'portal.linksAskedFor';
const LINK_VALID_MS = 24 * 3600_000;

/**
 * The e-mail addresses this browser asked a sign-in link for (the sign-in form), with when, for as long as a link is
 * valid: a link that signs in as one of them is the person's own, and needs no question. Kept in localStorage, as the
 * link opens in another tab; addresses only, never a token.
 */
export function rememberLinkAskedFor(email: string): void {
  const asked = askedForLinks();
  asked[email.trim().toLowerCase()] = Date.now();
  storeAsked(asked);
}

/** The addresses asked for whose links may still be valid; the others are dropped from the store as it is read. */
function askedForLinks(): Record<string, number> {
  let kept: Record<string, unknown> = {};
  try {
    kept = JSON.parse(localStorage.getItem(ASKED_KEY) ?? '{}') as Record<string, unknown>;
  } catch {
    /* not ours: dropped */
  }
  const valid = Object.fromEntries(
    Object.entries(kept ?? {}).filter(
      (e): e is [string, number] => typeof e[1] === 'number' && Date.now() - e[1] < LINK_VALID_MS,
    ),
  );
  storeAsked(valid);
  return valid;
}

const storeAsked = (asked: Record<string, number>) => {
  if (Object.keys(asked).length === 0) localStorage.removeItem(ASKED_KEY);
  else localStorage.setItem(ASKED_KEY, JSON.stringify(asked));
};

/** A link asked for has signed in: its address is kept no longer (a shared computer keeps no list of who signed in). */
export function forgetAskedFor(email: string | undefined) {
  if (email === undefined) return;
  const asked = askedForLinks();
  delete asked[email.toLowerCase()];
  storeAsked(asked);
}

export const askedFor = (email: string | undefined) => email !== undefined && email.toLowerCase() in askedForLinks();

const RETURN_KEY = 'portal.pageAfterSignIn';
const RETURN_MS = 30 * 60_000;
/** A page of the portal's own, by its address (`#/deliveries?status=failed`): nothing else is ever returned to. */
const PAGE = /^#\/[\w/-]*(\?[\w=&%.:+-]*)?$/;

/**
 * The page asked for while signed out (a failure mail's link to what failed), kept for the sign-in link: that link
 * opens in another tab, whose sessionStorage is its own, so the page is kept in localStorage (an address, no secret),
 * for half an hour.
 */
export function rememberPageForSignIn(hash: string): void {
  if (PAGE.test(hash) && hash !== '#/endpoint')
    localStorage.setItem(RETURN_KEY, JSON.stringify({ hash, at: Date.now() }));
}

/** Where a sign-in link leads: the page remembered (once), else the Endpoint page. */
export function pageAfterSignIn(): string {
  const kept = localStorage.getItem(RETURN_KEY);
  localStorage.removeItem(RETURN_KEY);
  try {
    const { hash, at } = JSON.parse(kept ?? 'null') as { hash: string; at: number };
    if (typeof hash === 'string' && PAGE.test(hash) && Date.now() - at < RETURN_MS) return hash;
  } catch {
    /* nothing kept, or not ours */
  }
  return '#/endpoint';
}
