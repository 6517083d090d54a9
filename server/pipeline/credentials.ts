import { createHash, timingSafeEqual } from 'node:crypto';

/** The token of an `Authorization: Bearer <token>` header (RFC 6750), or null when there is none. */
export const bearerToken = (authorization: string | undefined): string | null =>
  /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? null;

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Constant time whatever the lengths: both sides are hashed to equal-length digests first. */
export function secretEquals(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** Whether the header carries the admin token (ADMIN_TOKEN); never when the server has none. */
export function isAdmin(authorization: string | undefined, adminToken: string | undefined): boolean {
  const given = bearerToken(authorization);
  return Boolean(adminToken && given && secretEquals(given, adminToken));
}

/**
 * The `WWW-Authenticate` challenge of a 401 (RFC 6750 §3): `invalid_token` when a bearer token was given and refused,
 * no error code when none was or when the token was accepted and something else refused (`tokenAccepted`).
 */
export const bearerChallenge = (authorization: string | undefined, accepted = false): string =>
  accepted || bearerToken(authorization) === null ? 'Bearer' : 'Bearer error="invalid_token"';

/** Why an admin call is refused: the server may have no admin token at all, which the caller cannot fix by retrying. */
export const adminRefusal = (adminToken: string | undefined): string =>
  adminToken
    ? 'A valid admin token is required.'
    : 'This server has no ADMIN_TOKEN, so every admin call is refused: set ADMIN_TOKEN (16 characters or more) in its environment and restart it.';
