import type { Principal } from '../auth.ts';
import { DomainError } from '../errors.ts';
import type { Deps } from '../ports.ts';

/**
 * Fair use: an account gets at most its share of requests a second (CONTRACT §1), counted once its token is known
 * good, so that one tenant hammering the service is slowed down alone. Beyond it: 429 with the seconds to wait.
 */
export async function admitRequest(deps: Pick<Deps, 'requestLimiter'>, principal: Principal): Promise<void> {
  const wait = await deps.requestLimiter.consume(principal.accountId);
  if (wait !== null) throw pastShare(wait);
}

/** Refuses an account already known to be past its share for the rest of its window, without counting. */
export function refuseWhilePastShare(deps: Pick<Deps, 'requestLimiter'>, principal: Principal): void {
  const wait = deps.requestLimiter.peek(principal.accountId);
  if (wait !== null) throw pastShare(wait);
}

const pastShare = (waitSeconds: number) =>
  new DomainError('RATE_LIMITED', 'Too many requests for this account: slow down.', [], waitSeconds);
