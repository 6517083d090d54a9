import type { Role } from '../account.ts';
import type { Principal } from '../auth.ts';
import { DomainError } from '../errors.ts';
import type { Deps } from '../ports.ts';
import { admitRequest, refuseWhilePastShare } from './admit-request.ts';

/**
 * Who calls: a valid access token of a contact that has API access now (one lookup by primary key, so a
 * withdrawal takes effect on the next call), with a role this endpoint serves. Every failure is a 401; a valid
 * token of the other role is told which role the endpoint needs (CONTRACT §4). The account's fair share counts
 * authenticated requests only (a withdrawn contact's token uses up nobody's share). In two steps, so that the edge
 * may queue a caller in its account's lane between them: `identifyCaller`, then `admitCaller`, which counts.
 */
export async function authenticate(
  deps: Pick<Deps, 'contacts' | 'tokens' | 'clock' | 'requestLimiter'>,
  input: { accessToken: string | null; roles: readonly Role[] },
): Promise<Principal> {
  return admitCaller(deps, await identifyCaller(deps, input));
}

const REFRESH_TOKEN_SENT =
  'This is a refresh token, which calls nothing but the token endpoint: exchange it for an access token at ' +
  'POST /v3/auth/access-token, and send that one.';

/**
 * The caller, when its token verifies, has a role this endpoint serves and belongs to a contact that has API access
 * now; not yet counted. An account already refused for the rest of its window is refused before the lookup, so that a
 * tenant hammering past its share costs no database round trip.
 */
export async function identifyCaller(
  deps: Pick<Deps, 'contacts' | 'tokens' | 'clock' | 'requestLimiter'>,
  input: { accessToken: string | null; roles: readonly Role[] },
): Promise<Principal> {
  const claims = input.accessToken ? await deps.tokens.verify('access', input.accessToken, deps.clock.now()) : null;
  if (!claims) {
    // A refresh token only buys access tokens: a caller who sends one here is a step short, and is told which.
    if (input.accessToken && (await deps.tokens.verify('refresh', input.accessToken, deps.clock.now()))) {
      throw new DomainError('UNAUTHENTICATED', REFRESH_TOKEN_SENT);
    }
    throw new DomainError('UNAUTHENTICATED', 'A valid access token is required.');
  }
  if (!input.roles.includes(claims.role)) {
    throw new DomainError(
      'REQUEST_UNAUTHENTICATED',
      `This endpoint needs a ${input.roles.join(' or ')} access token; this one is a ${claims.role} token.`,
    );
  }
  refuseWhilePastShare(deps, claims);
  const contact = await deps.contacts.accessOf(claims.contactId);
  if (!contact?.apiAccess || contact.accountId !== claims.accountId)
    throw new DomainError('UNAUTHENTICATED', 'A valid access token is required.');
  return claims;
}

/** The identified caller, counted against its account's share (refused without counting if already past it). */
export async function admitCaller(deps: Pick<Deps, 'requestLimiter'>, caller: Principal): Promise<Principal> {
  refuseWhilePastShare(deps, caller);
  await admitRequest(deps, caller);
  return caller;
}
