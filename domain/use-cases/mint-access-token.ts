import { ACCESS_TOKEN_LIFETIME } from '../auth.ts';
import { DomainError, invalid } from '../errors.ts';
import type { Deps } from '../ports.ts';
import { admitRequest } from './admit-request.ts';

const refused = () => new DomainError('UNAUTHENTICATED', 'A valid refresh token is required.');

/**
 * Step two of the login: a refresh token, still valid and of a contact that still has API access, buys an access token.
 */
export async function mintAccessToken(
  deps: Pick<Deps, 'contacts' | 'tokens' | 'clock' | 'requestLimiter'>,
  input: { refreshToken: string | null; expiresAfter?: number },
): Promise<{ access_token: string; token_type: 'Bearer'; expires_in: number }> {
  const lifetime = input.expiresAfter ?? ACCESS_TOKEN_LIFETIME.default;
  const now = deps.clock.now();
  const claims = input.refreshToken ? await deps.tokens.verify('refresh', input.refreshToken, now) : null;
  if (!claims) throw refused();
  const contact = await deps.contacts.get(claims.contactId);
  if (!contact?.apiAccess || contact.accountId !== claims.accountId) throw refused();
  await admitRequest(deps, claims);
  if (!Number.isInteger(lifetime) || lifetime < ACCESS_TOKEN_LIFETIME.min || lifetime > ACCESS_TOKEN_LIFETIME.max) {
    throw invalid(
      'expires_after',
      `expires_after must be a whole number of seconds from ${ACCESS_TOKEN_LIFETIME.min} to ${ACCESS_TOKEN_LIFETIME.max}.`,
    );
  }
  const token = await deps.tokens.issue('access', claims, now, lifetime);
  return { access_token: token, token_type: 'Bearer', expires_in: lifetime };
}
