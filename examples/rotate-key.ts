// Changing your signature key without losing a webhook: POST /v3/webhook-config/rotate-key.

/**
 * Makes `newKey` your key (at least 16 characters: `randomBytes(32).toString('base64url')` makes a good one; keep it in
 * your secret store first, it is never shown again). Your current key stays valid beside it for `previousKeyValidFor`
 * seconds (a day unless you say otherwise, a week at most): meanwhile every webhook carries a signature with each key,
 * and your partner commands may be signed with either, so the order is yours: rotate, then move your receiver and your
 * client over to the new key, one after the other, before the old one ends. Answers when the old key ends.
 */
export async function rotateSignatureKey(
  baseUrl: string,
  accessToken: string,
  newKey: string,
  previousKeyValidFor = 86_400,
): Promise<string | null> {
  const url = new URL('v3/webhook-config/rotate-key', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ signatureKey: newKey, previousKeyValidFor }),
  });
  // 409: your configuration has no key yet (set one with PUT /v3/webhook-config); 404: you have no configuration of your own.
  if (!res.ok) throw new Error(`POST /v3/webhook-config/rotate-key answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { previousKeyExpiresAt: string | null }).previousKeyExpiresAt;
}
