// What we sent your endpoint and what it answered, try by try, and which of your keys signed each try: for a receiver
// that refuses our signatures (a key rotated on one side only) or answers something unexpected.
import { createHmac } from 'node:crypto';

export interface Try {
  at: string;
  statusCode: number | null;
  /** The index in `keys` of the key whose Standard Webhooks signature the try carried; null when none did. */
  signedWith: number | null;
  /** The start of what your endpoint answered; null when no answer came (a timeout, a refused connection). */
  answer: string | null;
}

/** `webhook-signature` as Standard Webhooks makes it: a `whsec_` key is base64 after its prefix, any other its UTF-8 bytes. */
function signature(key: string, id: string, timestamp: string, payload: string): string {
  const secret = key.startsWith('whsec_')
    ? Buffer.from(key.slice('whsec_'.length), 'base64')
    : Buffer.from(key, 'utf8');
  return `v1,${createHmac('sha256', secret).update(`${id}.${timestamp}.${payload}`).digest('base64')}`;
}

/** Reads one delivery (GET /v3/webhook-deliveries/{id}) and checks each try's signatures against the stored payload. */
export async function explainDelivery(
  baseUrl: string,
  accessToken: string,
  deliveryId: string,
  keys: readonly string[],
): Promise<Try[]> {
  const url = new URL(
    `v3/webhook-deliveries/${encodeURIComponent(deliveryId)}`,
    baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`,
  );
  const res = await fetch(url, { headers: { authorization: `Bearer ${accessToken}` } });
  if (!res.ok) throw new Error(`GET /v3/webhook-deliveries/${deliveryId} answered ${res.status}: ${await res.text()}`);
  const delivery = (await res.json()) as {
    payload: string;
    attempts: {
      at: string;
      statusCode: number | null;
      request: { headers: Record<string, string> } | null;
      response: { body: string } | null;
    }[];
  };
  return delivery.attempts.map((a) => {
    const headers = a.request?.headers ?? {};
    // The header can carry several signatures, space-separated (during a key rotation, the new key's first).
    const sent = (headers['webhook-signature'] ?? '').split(' ');
    const index = keys.findIndex((key) =>
      sent.includes(signature(key, headers['webhook-id'] ?? '', headers['webhook-timestamp'] ?? '', delivery.payload)),
    );
    return {
      at: a.at,
      statusCode: a.statusCode,
      signedWith: index < 0 ? null : index,
      answer: a.response ? a.response.body.slice(0, 200) : null,
    };
  });
}
