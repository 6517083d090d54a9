// Verifying a webhook in your receiver, over the raw body exactly as received (parse it only after), with the
// Standard Webhooks library: `npm install standardwebhooks`.
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
export function verifyWebhook(rawBody: string, headers: Record<string, string | string[] | undefined>, key: string): Record<string, unknown> {
  const header = (name: string) => {
    const value = headers[name];
    if (typeof value !== 'string') throw new Error(`the ${name} header is missing`);
    return value;
  };
  const verifier = key.startsWith('whsec_') ? new Webhook(key) : new Webhook(Buffer.from(key, 'utf8'), { format: 'raw' });
  return verifier.verify(rawBody, {
    'webhook-id': header('webhook-id'), 'webhook-timestamp': header('webhook-timestamp'), 'webhook-signature': header('webhook-signature'),
  }) as Record<string, unknown>;
}
