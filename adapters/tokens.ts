import { jwtVerify, SignJWT } from 'jose';
import type { TokenClaims, TokenKind } from '../domain/auth.ts';
import type { IdGenerator, TokenService } from '../domain/ports.ts';

const ISSUER = 'urn:partner-brand-api';
// Each kind has its own `typ` and audience: the validation rules of the two kinds exclude each other (RFC 8725
// §3.11-3.12).
const KINDS: Record<TokenKind, { typ: string; audience: string }> = {
  refresh: { typ: 'refresh+jwt', audience: 'urn:partner-brand-api:token-endpoint' },
  access: { typ: 'at+jwt', audience: 'urn:partner-brand-api:v3' },
};

const VERIFIED_CACHE_SIZE = 10_000;

/**
 * HS256 JWTs with jose; the algorithm is pinned, never taken from the token. Tokens are signed with the current key
 * and verified with it or, during a rotation, with the previous ones (JWT_SECRET_PREVIOUS), so that tokens issued
 * before the rotation keep working until they expire or the setting is removed. Tokens that verified once are
 * remembered (bounded, oldest dropped first) so that a client's every call does not pay for the signature again; their
 * expiry is still checked against the given time on every call.
 */
export class JoseTokenService implements TokenService {
  private readonly verified = new Map<string, { kind: TokenKind; claims: TokenClaims; exp: number }>();

  constructor(
    private readonly key: Uint8Array,
    private readonly ids: IdGenerator,
    private readonly previousKeys: readonly Uint8Array[] = [],
  ) {}

  async issue(kind: TokenKind, claims: TokenClaims, issuedAt: Date, lifetimeSeconds: number): Promise<string> {
    const iat = Math.floor(issuedAt.getTime() / 1000);
    return new SignJWT({ acc: claims.accountId, role: claims.role })
      .setProtectedHeader({ alg: 'HS256', typ: KINDS[kind].typ })
      .setIssuer(ISSUER)
      .setAudience(KINDS[kind].audience)
      .setSubject(claims.contactId)
      .setJti(this.ids.newId())
      .setIssuedAt(iat)
      .setExpirationTime(iat + lifetimeSeconds)
      .sign(this.key);
  }

  async verify(kind: TokenKind, token: string, now: Date): Promise<TokenClaims | null> {
    const known = this.verified.get(token);
    if (known) return known.kind === kind && now.getTime() / 1000 < known.exp ? { ...known.claims } : null;
    for (const key of [this.key, ...this.previousKeys]) {
      const claims = await this.verifyWith(key, kind, token, now);
      if (claims) return claims;
    }
    return null;
  }

  private async verifyWith(key: Uint8Array, kind: TokenKind, token: string, now: Date): Promise<TokenClaims | null> {
    try {
      const { payload } = await jwtVerify(token, key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience: KINDS[kind].audience,
        typ: KINDS[kind].typ,
        currentDate: now,
        requiredClaims: ['sub', 'jti', 'iat', 'exp'],
      });
      const { sub, acc, role } = payload;
      if (typeof sub !== 'string' || typeof acc !== 'string' || (role !== 'brand' && role !== 'partner')) return null;
      const claims: TokenClaims = { contactId: sub, accountId: acc, role };
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, { kind, claims, exp: payload.exp! });
      return { ...claims };
    } catch {
      return null;
    }
  }
}
