// Trying your receiver with an example of every event type: POST /v3/webhook-config/test with { eventType }.

export const EVENT_TYPES = [
  'WebhookTestEvent',
  'OrderStatusEvent',
  'InvoiceEvent',
  'CommandResultEvent',
  'CommandErrorEvent',
] as const;

export interface EndpointTest {
  delivered: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/**
 * Has the service send your endpoint, now, a complete example of each type in your configuration's transformer and
 * version, signed as real deliveries are and marked `webhook-test: 1` (your receiver verifies it as any other, and
 * should not apply it to its data). Answers what your endpoint did with each. At most 10 tests a minute.
 */
export async function tryEveryEventType(baseUrl: string, accessToken: string): Promise<Record<string, EndpointTest>> {
  const url = new URL('v3/webhook-config/test', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  const outcomes: Record<string, EndpointTest> = {};
  for (const eventType of EVENT_TYPES) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ eventType }),
    });
    if (!res.ok) throw new Error(`POST /v3/webhook-config/test answered ${res.status}: ${await res.text()}`);
    outcomes[eventType] = (await res.json()) as EndpointTest;
  }
  return outcomes;
}
