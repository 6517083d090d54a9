import { createHmac, timingSafeEqual } from 'node:crypto';
import type { RequestSignatures } from '../domain/ports.ts';

const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/** x-webhook-signature: hex HMAC-SHA256 of the raw bytes, the key's UTF-8 bytes as key (SPEC §5.6, CONTRACT §7). */
export const hmacSignatures: RequestSignatures = {
  matches(key, body, signature) {
    if (!HEX_SHA256.test(signature)) return false;
    const expected = createHmac('sha256', key).update(body).digest();
    return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
  },
};
