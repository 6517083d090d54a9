import { SignJWT, jwtVerify } from 'jose';
import type { TokenClaims, TokenKind } from '../domain/auth.ts';
import type { IdGenerator, TokenService } from '../domain/ports.ts';

const ISSUER = 'urn:partner-brand-api';
// Each kind has its own `typ` and audience: the validation rules of the two kinds exclude each other (RFC 8725 §3.11-3.12).
const KINDS: Record<TokenKind, { typ: string; audience: string }> = {
  refresh: { typ: 'refresh+jwt', audience: 'urn:partner-brand-api:token-endpoint' },
  access: { typ: 'at+jwt', audience: 'urn:partner-brand-api:v3' },
};

const VERIFIED_CACHE_SIZE = 10_000;

/**
 * HS256 JWTs with jose; the algorithm is pinned, never taken from the token. Tokens that verified once are
 * remembered (bounded, oldest dropped first) so that a client's every call does not pay for the signature
 * again; their expiry is still checked against the given time on every call.
 */
export class JoseTokenService implements TokenService {
  private readonly verified = new Map<string, { kind: TokenKind; claims: TokenClaims; exp: number }>();

  constructor(
    private readonly key: Uint8Array,
    private readonly ids: IdGenerator,
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
    try {
      const { payload } = await jwtVerify(token, this.key, {
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
