import { createHash, timingSafeEqual } from 'node:crypto';

/** The token of an `Authorization: Bearer <token>` header (RFC 6750), or null when there is none. */
export const bearerToken = (authorization: string | undefined): string | null => /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? null;

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
