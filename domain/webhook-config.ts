import type { Role } from './account.ts';
import type { DisabledReason } from './endpoint-health.ts';
import { conflict, invalid } from './errors.ts';
import type { SigningPair } from './ports/credentials.ts';

export type Scope = Role;
export type Transformer = 'default' | 'partner-format';
export type PayloadVersion = '1.0.0' | '1.1.0' | '1.3.0';

export const SCOPES: readonly Scope[] = ['brand', 'partner'];
export const TRANSFORMERS: readonly Transformer[] = ['default', 'partner-format'];
export const PAYLOAD_VERSIONS: readonly PayloadVersion[] = ['1.0.0', '1.1.0', '1.3.0'];
const LATEST_VERSION: PayloadVersion = '1.3.0';

export interface PayloadFormat {
  transformer: Transformer;
  version: PayloadVersion;
}

export interface WebhookConfigProps {
  id: string;
  accountId: string;
  scope: Scope;
  url: string | null;
  transformer: Transformer;
  version: PayloadVersion;
  signatureKey: string | null;
  /** The key rotated out, still valid until it expires (CONTRACT §11); absent: none. */
  previousKey?: PreviousKey | null;
  /** Whether deliveries carry an Ed25519 (`v1a`) signature too (CONTRACT §11); absent: no. */
  asymmetricSigning?: boolean;
  /** The endpoint's key pair, made when asymmetric signing is first turned on, kept when it is turned off. */
  signingPair?: SigningPair | null;
  /** The pair rotated out, still signing until it expires. */
  previousPair?: (SigningPair & { expiresAt: Date }) | null;
  enabled: boolean;
  /** Endpoint health (CONTRACT §11): written by the record of attempts, never by a save (see the repository). */
  failingSince: Date | null;
  disabledReason: DisabledReason | null;
  failureMailedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface PreviousKey {
  value: string;
  expiresAt: Date;
}

/**
 * What signs and verifies: the current key and, while its window lasts, the one rotated out; and the key pairs alike.
 */
export type SigningKeys = Pick<
  WebhookConfigProps,
  'signatureKey' | 'previousKey' | 'asymmetricSigning' | 'signingPair' | 'previousPair'
>;

/** The fewest characters a signature key may have (CONTRACT §7). */
export const SIGNATURE_KEY_MIN_LENGTH = 16;

/** How long a rotated-out key may stay valid, and how long it does when the caller does not say (CONTRACT §11). */
export const PREVIOUS_KEY_MAX_SECONDS = 7 * 86_400;
export const PREVIOUS_KEY_DEFAULT_SECONDS = 86_400;

/**
 * Whitespace or a control character anywhere in an endpoint's URL (CONTRACT §7). `new URL` would strip the leading and
 * trailing ones and drop tabs and line breaks inside, so the stored text would not be what is sent; and a CR/LF stored
 * as given reaches the failing-endpoint mail, where it would start lines of the sender's choosing.
 */
const URL_REFUSED_CHARACTERS = /[\s\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u2060\ufeff]/u;

/** The one home of the endpoint URL's text rule, for integrators and admins alike: 400 naming `url`. */
export function checkEndpointUrlText(url: string): void {
  if (URL_REFUSED_CHARACTERS.test(url)) {
    throw invalid('url', 'The URL must not contain whitespace or control characters (percent-encode them).');
  }
}

/**
 * A URL to put in a line of text (a mail's subject): each character the rule refuses percent-encoded, so that one
 * stored before the rule existed cannot start a line of its own.
 */
export const endpointUrlAsText = (url: string) =>
  url.replace(new RegExp(URL_REFUSED_CHARACTERS.source, 'gu'), encodeURIComponent);

function checkValidFor(validForSeconds: number): void {
  if (!Number.isInteger(validForSeconds) || validForSeconds < 0 || validForSeconds > PREVIOUS_KEY_MAX_SECONDS) {
    throw invalid(
      'previousKeyValidFor',
      `previousKeyValidFor is a whole number of seconds from 0 to ${PREVIOUS_KEY_MAX_SECONDS}.`,
    );
  }
}

/** The one home of the key rule: a key too short to be a secret is refused (400). */
function checkSignatureKey(key: string): void {
  if (key.length < SIGNATURE_KEY_MIN_LENGTH)
    throw invalid('signatureKey', `A signature key needs at least ${SIGNATURE_KEY_MIN_LENGTH} characters.`);
}

/**
 * The keys in force at `now`, the current one first: outgoing webhooks are signed with each, and an incoming partner
 * command may be signed with any. An expired previous key counts nowhere, whether or not it has been cleared yet.
 */
export function keysInForce(keys: SigningKeys, now: Date): string[] {
  if (keys.signatureKey === null) return [];
  const previous = keys.previousKey && keys.previousKey.expiresAt > now ? [keys.previousKey.value] : [];
  return [keys.signatureKey, ...previous];
}

/**
 * The private keys that sign asymmetrically at `now`, the current pair's first; none while asymmetric signing is off.
 */
export function pairsInForce(keys: SigningKeys, now: Date): string[] {
  if (!keys.asymmetricSigning || !keys.signingPair) return [];
  const previous = keys.previousPair && keys.previousPair.expiresAt > now ? [keys.previousPair.privateKey] : [];
  return [keys.signingPair.privateKey, ...previous];
}

export class WebhookConfig {
  id!: string;
  accountId!: string;
  scope!: Scope;
  url!: string | null;
  transformer!: Transformer;
  version!: PayloadVersion;
  signatureKey!: string | null;
  previousKey!: PreviousKey | null;
  asymmetricSigning!: boolean;
  signingPair!: SigningPair | null;
  previousPair!: (SigningPair & { expiresAt: Date }) | null;
  enabled!: boolean;
  failingSince!: Date | null;
  disabledReason!: DisabledReason | null;
  failureMailedAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;

  constructor(props: WebhookConfigProps) {
    Object.assign(this, { previousKey: null, asymmetricSigning: false, signingPair: null, previousPair: null }, props);
  }

  /**
   * Makes `key` the key and keeps the current one valid for `validForSeconds` more (0: not at all), so that receivers
   * can move over meanwhile. Nothing to rotate is a conflict: a first key is set with PUT.
   */
  rotateKey(key: string, validForSeconds: number, now: Date): void {
    if (this.signatureKey === null)
      throw conflict('Your webhook configuration has no signature key to rotate: set one with PUT /v3/webhook-config.');
    checkSignatureKey(key);
    checkValidFor(validForSeconds);
    this.previousKey =
      validForSeconds > 0
        ? { value: this.signatureKey, expiresAt: new Date(now.getTime() + validForSeconds * 1000) }
        : null;
    this.signatureKey = key;
  }

  /**
   * Turns asymmetric signing on or off. On, the endpoint has a key pair: the one it had, else `newPair()` (made only
   * when needed). Off, the pair is kept but signs nothing and is not shown.
   */
  signAsymmetrically(on: boolean, newPair: () => SigningPair): void {
    if (on && !this.signingPair) this.signingPair = newPair();
    this.asymmetricSigning = on;
  }

  /** Makes `pair` the endpoint's and keeps the current pair signing for `validForSeconds` more (0: not at all). */
  rotatePair(pair: SigningPair, validForSeconds: number, now: Date): void {
    if (!this.asymmetricSigning || !this.signingPair) {
      throw conflict(
        'Asymmetric signing is not on for your webhook configuration: turn it on with PUT /v3/webhook-config (asymmetricSigning: true).',
      );
    }
    checkValidFor(validForSeconds);
    this.previousPair =
      validForSeconds > 0 ? { ...this.signingPair, expiresAt: new Date(now.getTime() + validForSeconds * 1000) } : null;
    this.signingPair = pair;
  }

  /** A key set (or removed) outright ends any rotation window at once: only the new key counts from now on. */
  replaceKey(key: string | null): void {
    if (key !== null) checkSignatureKey(key);
    this.signatureKey = key;
    this.previousKey = null;
  }

  /**
   * Forgets a previous key (or pair) whose window has ended (it counts nowhere already; this clears it from what is
   * stored).
   */
  dropExpiredKey(now: Date): void {
    if (this.previousKey && this.previousKey.expiresAt <= now) this.previousKey = null;
    if (this.previousPair && this.previousPair.expiresAt <= now) this.previousPair = null;
  }

  /**
   * Enabled, or disabled by the integrator. A new URL, or enabling again what was disabled, starts its health afresh:
   * it fails only from its next attempt without a 2xx.
   */
  configure(url: string | null, enabled: boolean): void {
    if (url !== this.url || (enabled && !this.enabled)) this.failingSince = null;
    this.url = url;
    this.enabled = enabled;
    this.disabledReason = enabled ? null : 'integrator';
  }

  payloadFormat(): PayloadFormat {
    return { transformer: this.transformer, version: this.version };
  }

  /** What integrators and tools see: the key itself is never shown. */
  view() {
    return {
      accountId: this.accountId,
      scope: this.scope,
      url: this.url,
      transformer: this.transformer,
      version: this.version,
      enabled: this.enabled,
      hasSignatureKey: this.signatureKey !== null,
      previousKeyExpiresAt: this.previousKey ? this.previousKey.expiresAt.toISOString() : null,
      asymmetricSigning: this.asymmetricSigning,
      publicKey: this.asymmetricSigning ? (this.signingPair?.publicKey ?? null) : null,
      previousPublicKey: this.asymmetricSigning ? (this.previousPair?.publicKey ?? null) : null,
      failingSince: this.failingSince?.toISOString() ?? null,
      disabledReason: this.disabledReason,
    };
  }
}

/** Format used when a receiver has no configuration of its own (CONTRACT §5, §6). */
export const defaultFormatFor = (scope: Scope): PayloadFormat => ({
  transformer: scope === 'brand' ? 'default' : 'partner-format',
  version: LATEST_VERSION,
});
