import {
  createHmac,
  createPrivateKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  timingSafeEqual,
} from 'node:crypto';
import type { KeyMaker, RequestSignatures, SigningPair } from '../domain/ports.ts';

// The one home of our HMACs: partners sign their commands towards us with the first, and we sign the webhooks we
// send with both (CONTRACT §7).

const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/** x-webhook-signature: hex HMAC-SHA256 of the raw bytes, the key's UTF-8 bytes as key (SPEC §5.6, CONTRACT §7). */
export const hexSignature = (key: string, body: string | Uint8Array) =>
  createHmac('sha256', key).update(body).digest('hex');

export const hmacSignatures: RequestSignatures = {
  matches(key, body, signature) {
    if (!HEX_SHA256.test(signature)) return false;
    return timingSafeEqual(Buffer.from(hexSignature(key, body), 'hex'), Buffer.from(signature, 'hex'));
  },
};

/** Standard Webhooks keys: `whsec_<base64>` signs with the decoded bytes, any other key with its UTF-8 bytes. */
const standardKeyBytes = (key: string) =>
  key.startsWith('whsec_') ? Buffer.from(key.slice('whsec_'.length), 'base64') : Buffer.from(key, 'utf8');

/** webhook-signature (Standard Webhooks v1): `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`. */
export const standardWebhookSignature = (key: string, id: string, timestamp: number, body: string) =>
  `v1,${createHmac('sha256', standardKeyBytes(key)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;

/**
 * webhook-signature's asymmetric part (Standard Webhooks v1a): `v1a,` + base64 Ed25519 signature of
 * `{id}.{timestamp}.{body}` with an endpoint's private key (PKCS8 DER, base64, as `keyMaker` makes it).
 */
export const asymmetricWebhookSignature = (privateKey: string, id: string, timestamp: number, body: string) =>
  `v1a,${sign(null, Buffer.from(`${id}.${timestamp}.${body}`), privateKeyObject(privateKey)).toString('base64')}`;

/** Parsing a key costs more than a signature: each endpoint's is parsed once (a bounded cache, emptied when full). */
const privateKeys = new Map<string, KeyObject>();
function privateKeyObject(privateKey: string): KeyObject {
  let key = privateKeys.get(privateKey);
  if (!key) {
    if (privateKeys.size >= 10_000) privateKeys.clear();
    key = createPrivateKey({ key: Buffer.from(privateKey, 'base64'), format: 'der', type: 'pkcs8' });
    privateKeys.set(privateKey, key);
  }
  return key;
}

/**
 * The signature headers of a webhook signed with `keys` (HMAC) and `asymmetricKeys` (Ed25519), the current ones first
 * (none at all: no headers). While a rotated-out key or pair is valid (CONTRACT §11), `webhook-signature` carries one
 * signature per key, space-separated as Standard Webhooks has it, the `v1,` ones before the `v1a,` ones, so that a
 * receiver knowing any of them verifies; `x-webhook-signature` holds one value, the current HMAC key's, when there is
 * one.
 */
export function signatureHeaders(
  keys: readonly string[],
  id: string,
  timestamp: number,
  body: string,
  asymmetricKeys: readonly string[] = [],
): Record<string, string> {
  if (keys.length === 0 && asymmetricKeys.length === 0) return {};
  const signatures = [
    ...keys.map((key) => standardWebhookSignature(key, id, timestamp, body)),
    ...asymmetricKeys.map((key) => asymmetricWebhookSignature(key, id, timestamp, body)),
  ];
  return {
    ...(keys.length > 0 && { 'x-webhook-signature': hexSignature(keys[0]!, body) }),
    'webhook-signature': signatures.join(' '),
  };
}

/** New secrets from the system's random source: `whsec_` keys of 32 bytes, and Ed25519 pairs. */
export const keyMaker: KeyMaker = {
  newSecretKey: () => `whsec_${randomBytes(32).toString('base64')}`,
  newKeyPair(): SigningPair {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
    return {
      privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
      publicKey: `whpk_${raw.toString('base64')}`,
    };
  },
};
