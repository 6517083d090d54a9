import type { Role } from '../account.ts';
import type { Deps } from '../ports.ts';
import { refuseWhilePastShare } from './admit-request.ts';

/**
 * Fair use decided before anything else runs: a valid access token, of a role the operation serves, of an account this
 * process already refuses for the rest of its window, is refused (RATE_LIMITED). The edge asks it first, so that a
 * tenant hammering past its share costs a signature check instead of the whole request path, and slows nobody else
 * down. While no account is refused it costs nothing; whatever it lets through, `authenticate` decides as always.
 */
export async function refuseEarlyPastShare(
  deps: Pick<Deps, 'tokens' | 'clock' | 'requestLimiter'>,
  input: { accessToken: string | null; roles: readonly Role[] },
): Promise<void> {
  if (!input.accessToken || !deps.requestLimiter.refusingAny()) return;
  const claims = await deps.tokens.verify('access', input.accessToken, deps.clock.now());
  if (claims && input.roles.includes(claims.role)) refuseWhilePastShare(deps, claims);
}
