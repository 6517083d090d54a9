import type { TokenClaims, TokenKind } from '../auth.ts';

// Tokens and request signatures.

export interface TokenService {
  /** A signed token of this kind for the claims, issued at `issuedAt`, valid for `lifetimeSeconds`. */
  issue(kind: TokenKind, claims: TokenClaims, issuedAt: Date, lifetimeSeconds: number): Promise<string>;
  /** The claims of a valid token of exactly this kind at `now`; null for anything else, whatever the reason. */
  verify(kind: TokenKind, token: string, now: Date): Promise<TokenClaims | null>;
}

/**
 * An Ed25519 key pair of an endpoint (CONTRACT §11): the private key as the adapter keeps it, the public key as shown.
 */
export interface SigningPair {
  /** Opaque to the core: only the signer reads it. Never leaves the service. */
  privateKey: string;
  /** `whpk_` and the base64 of the 32-byte raw public key. */
  publicKey: string;
}

/** Where new secrets come from: random bytes the core cannot make itself. */
export interface KeyMaker {
  /** A new signature key: `whsec_` and the base64 of 32 random bytes. */
  newSecretKey(): string;
  /** A new Ed25519 key pair for asymmetric (`v1a`) signatures. */
  newKeyPair(): SigningPair;
}

export interface RequestSignatures {
  /**
   * Whether `signature` is the hex HMAC-SHA256 of `body` under `key` (hex in either case), compared in constant time.
   */
  matches(key: string, body: Uint8Array, signature: string): boolean;
}
