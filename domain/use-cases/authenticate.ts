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
 * may queue a caller in its account's lane between them: `identifyCaller` (the token alone) and `admitCaller`.
 */
export async function authenticate(
  deps: Pick<Deps, 'contacts' | 'tokens' | 'clock' | 'requestLimiter'>,
  input: { accessToken: string | null; roles: readonly Role[] },
): Promise<Principal> {
  return admitCaller(deps, await identifyCaller(deps, input));
}

/** The token's claims, when it verifies and has a role this endpoint serves: what it says, not yet checked against the contact. */
export async function identifyCaller(
  deps: Pick<Deps, 'tokens' | 'clock'>,
  input: { accessToken: string | null; roles: readonly Role[] },
): Promise<Principal> {
  const claims = input.accessToken ? await deps.tokens.verify('access', input.accessToken, deps.clock.now()) : null;
  if (!claims) throw new DomainError('UNAUTHENTICATED', 'A valid access token is required.');
  if (!input.roles.includes(claims.role)) {
    throw new DomainError('UNAUTHENTICATED', `This endpoint needs a ${input.roles.join(' or ')} access token; this one is a ${claims.role} token.`);
  }
  return claims;
}

/**
 * The identified caller, admitted: an account already refused for the rest of its window is refused before any lookup
 * (a tenant hammering past its share costs no database round trip); then the contact must still have API access, and
 * the request counts against the account's share.
 */
export async function admitCaller(deps: Pick<Deps, 'contacts' | 'requestLimiter'>, claims: Principal): Promise<Principal> {
  refuseWhilePastShare(deps, claims);
  const contact = await deps.contacts.accessOf(claims.contactId);
  if (!contact?.apiAccess || contact.accountId !== claims.accountId) throw new DomainError('UNAUTHENTICATED', 'A valid access token is required.');
  await admitRequest(deps, claims);
  return claims;
}
