// Verifying a webhook in your receiver: both signatures, over the raw body exactly as received (parse it only after).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * `x-webhook-signature`: the hex HMAC-SHA256 of the body under your signature key, compared in constant time.
 * `webhook-signature` (Standard Webhooks, `v1,<base64>` over `webhook-id.webhook-timestamp.body`): checked by the
 * standardwebhooks library, which also refuses a timestamp more than 5 minutes away (replays). A key that starts with
 * `whsec_` is base64 after the prefix; any other key is used as its UTF-8 bytes.
 * Answers the event, or throws when either signature is missing or wrong.
 */
export function verifyWebhook(rawBody: string, headers: Record<string, string | string[] | undefined>, key: string): Record<string, unknown> {
  const header = (name: string) => {
    const value = headers[name];
    if (typeof value !== 'string') throw new Error(`the ${name} header is missing`);
    return value;
  };
  const expected = createHmac('sha256', key).update(rawBody).digest();
  const given = Buffer.from(header('x-webhook-signature'), 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new Error('x-webhook-signature does not match');
  const verifier = key.startsWith('whsec_') ? new Webhook(key) : new Webhook(Buffer.from(key, 'utf8'), { format: 'raw' });
  return verifier.verify(rawBody, {
    'webhook-id': header('webhook-id'), 'webhook-timestamp': header('webhook-timestamp'), 'webhook-signature': header('webhook-signature'),
  }) as Record<string, unknown>;
}
