import { createHmac, timingSafeEqual } from 'node:crypto';
import type { RequestSignatures } from '../domain/ports.ts';

// The one home of our HMACs: partners sign their commands towards us with the first, and we sign the webhooks we
// send with both (CONTRACT §7).

const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/** x-webhook-signature: hex HMAC-SHA256 of the raw bytes, the key's UTF-8 bytes as key (SPEC §5.6, CONTRACT §7). */
export const hexSignature = (key: string, body: string | Uint8Array) => createHmac('sha256', key).update(body).digest('hex');

export const hmacSignatures: RequestSignatures = {
  matches(key, body, signature) {
    if (!HEX_SHA256.test(signature)) return false;
    return timingSafeEqual(Buffer.from(hexSignature(key, body), 'hex'), Buffer.from(signature, 'hex'));
  },
};

/** Standard Webhooks keys: `whsec_<base64>` signs with the decoded bytes, any other key with its UTF-8 bytes. */
const standardKeyBytes = (key: string) => (key.startsWith('whsec_') ? Buffer.from(key.slice('whsec_'.length), 'base64') : Buffer.from(key, 'utf8'));

/** webhook-signature (Standard Webhooks v1): `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`. */
export const standardWebhookSignature = (key: string, id: string, timestamp: number, body: string) =>
  `v1,${createHmac('sha256', standardKeyBytes(key)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;

/**
 * The signature headers of a webhook signed with `keys`, the current key first (none: no headers). While a rotated-out
 * key is valid (CONTRACT §11), `webhook-signature` carries one `v1,` signature per key, space-separated as Standard
 * Webhooks has it, so that a receiver knowing either key verifies; `x-webhook-signature` holds one value, the current key's.
 */
export function signatureHeaders(keys: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  if (keys.length === 0) return {};
  return {
    'x-webhook-signature': hexSignature(keys[0]!, body),
    'webhook-signature': keys.map((key) => standardWebhookSignature(key, id, timestamp, body)).join(' '),
  };
}
