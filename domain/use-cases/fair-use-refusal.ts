import type { Role } from '../account.ts';
import type { Principal } from '../auth.ts';
import type { Deps } from '../ports.ts';
import { refuseWhilePastShare } from './admit-request.ts';

/**
 * Fair use decided before anything else runs: a valid access token, of a role the operation serves, of an account this
 * process already refuses for the rest of its window, is refused (RATE_LIMITED). The edge asks it first, when some
 * account is refused, so that a tenant hammering past its share costs a signature check instead of the whole request
 * path, and slows nobody else down. Returns the caller it let through (null without a valid token of those roles), for
 * the edge's own checks; whatever it lets through, `authenticate` decides as always.
 */
export async function refuseEarlyPastShare(
  deps: Pick<Deps, 'tokens' | 'clock' | 'requestLimiter'>,
  input: { accessToken: string | null; roles: readonly Role[] },
): Promise<Principal | null> {
  if (!input.accessToken) return null;
  const claims = await deps.tokens.verify('access', input.accessToken, deps.clock.now());
  if (!claims || !input.roles.includes(claims.role)) return null;
  refuseWhilePastShare(deps, claims);
  return claims;
}
