import type { TokenClaims, TokenKind } from '../auth.ts';

// Tokens and request signatures.

export interface TokenService {
  /** A signed token of this kind for the claims, issued at `issuedAt`, valid for `lifetimeSeconds`. */
  issue(kind: TokenKind, claims: TokenClaims, issuedAt: Date, lifetimeSeconds: number): Promise<string>;
  /** The claims of a valid token of exactly this kind at `now`; null for anything else, whatever the reason. */
  verify(kind: TokenKind, token: string, now: Date): Promise<TokenClaims | null>;
}

export interface RequestSignatures {
  /** Whether `signature` is the hex HMAC-SHA256 of `body` under `key` (hex in either case), compared in constant time. */
  matches(key: string, body: Uint8Array, signature: string): boolean;
}
