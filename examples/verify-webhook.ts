// Verifying a webhook in your receiver, over the raw body exactly as received (parse it only after), with the
// Standard Webhooks library (`npm install standardwebhooks`) for the HMAC signatures, and node:crypto for the Ed25519 ones.
import { createPublicKey, verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * `webhook-signature` (Standard Webhooks: `v1,<base64>`, HMAC-SHA256 of `webhook-id.webhook-timestamp.body`) is checked
 * by the standardwebhooks library, which also refuses a timestamp more than 5 minutes away (replays). While you rotate
 * your key, the header carries a signature with each valid key, space-separated, and the library accepts the message
 * when any of them is made with yours: a receiver that knows only the new key and one that knows only the old key both
 * verify, so you can switch your receiver at any moment of the window. A key that starts with `whsec_` is base64 after
 * the prefix; any other key is used as its UTF-8 bytes. Answers the event, or throws when the signature is missing or
 * wrong.
 */
export function verifyWebhook(
  rawBody: string,
  headers: Record<string, string | string[] | undefined>,
  key: string,
): Record<string, unknown> {
  const header = (name: string) => {
    const value = headers[name];
    if (typeof value !== 'string') throw new Error(`the ${name} header is missing`);
    return value;
  };
  const verifier = key.startsWith('whsec_')
    ? new Webhook(key)
    : new Webhook(Buffer.from(key, 'utf8'), { format: 'raw' });
  return verifier.verify(rawBody, {
    'webhook-id': header('webhook-id'),
    'webhook-timestamp': header('webhook-timestamp'),
    'webhook-signature': header('webhook-signature'),
  }) as Record<string, unknown>;
}

/**
 * With asymmetric signing on (PUT /v3/webhook-config with `asymmetricSigning: true`), `webhook-signature` also carries
 * `v1a,<base64>`: an Ed25519 signature of the same `webhook-id.webhook-timestamp.body`, which you verify with your
 * endpoint's public key (`publicKey` in GET /v3/webhook-config, `whpk_` and the base64 of the raw 32-byte key) and no
 * shared secret at all. The standardwebhooks library for JavaScript checks only `v1`, so this uses node:crypto, and
 * checks the timestamp as the library does. While a rotated pair is valid, two `v1a` signatures come: any one verifies.
 */
export function verifyAsymmetricWebhook(
  rawBody: string,
  headers: Record<string, string | string[] | undefined>,
  publicKey: string,
): Record<string, unknown> {
  const header = (name: string) => {
    const value = headers[name];
    if (typeof value !== 'string') throw new Error(`the ${name} header is missing`);
    return value;
  };
  const [id, timestamp] = [header('webhook-id'), header('webhook-timestamp')];
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 5 * 60)
    throw new Error('the timestamp is too old or too new');
  const raw = Buffer.from(publicKey.replace(/^whpk_/, ''), 'base64');
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  const signed = Buffer.from(`${id}.${timestamp}.${rawBody}`);
  const matches = header('webhook-signature')
    .split(' ')
    .filter((s) => s.startsWith('v1a,'))
    .some((s) => verify(null, signed, key, Buffer.from(s.slice('v1a,'.length), 'base64')));
  if (!matches) throw new Error('No matching v1a signature found');
  return JSON.parse(rawBody) as Record<string, unknown>;
}
