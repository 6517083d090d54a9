import type { Principal } from '../auth.ts';
import { isSuccess } from '../delivery.ts';
import { DomainError } from '../errors.ts';
import { type ExampleEventType, renderExampleEvent } from '../example-events.ts';
import { integratorEndpoint } from '../integrator-endpoint.ts';
import type { Deps } from '../ports.ts';
import { keysInForce, pairsInForce } from '../webhook-config.ts';

export interface EndpointTestOutcome {
  delivered: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/**
 * POST /v3/webhook-config/test: one signed example event of the type asked for (a WebhookTestEvent by default) in the
 * endpoint's transformer and version, sent at once through the webhook sender (its headers, signatures, target rules
 * and timeout) marked `webhook-test: 1`, nothing stored. Run outside any transaction (the configuration is one read):
 * no connection is held while the endpoint answers. A disabled endpoint is tested too: that is how one is tried
 * before it goes live. `traceparent`: the test request's trace context, which the example carries (CONTRACT §13).
 */
export async function testWebhookEndpoint(
  deps: Pick<Deps, 'accounts' | 'webhookConfigs' | 'webhookSender' | 'endpointTestLimiter' | 'ids' | 'clock'>,
  principal: Principal,
  eventType: ExampleEventType = 'WebhookTestEvent',
  traceparent: string | null = null,
): Promise<EndpointTestOutcome> {
  const endpoint = await integratorEndpoint(deps, principal);
  if (!endpoint.url)
    throw new DomainError(
      'NOT_FOUND',
      'Your webhook configuration has no URL to test: set one with PUT /v3/webhook-config.',
    );
  // Per account (CONTRACT §10), and per endpoint too: the children that share their master's endpoint cannot multiply
  // the requests it gets.
  const waits = [
    await deps.endpointTestLimiter.consume(`account:${principal.accountId}`),
    await deps.endpointTestLimiter.consume(`endpoint:${endpoint.id}`),
  ];
  const retryAfter = Math.max(...waits.map((w) => w ?? 0));
  if (retryAfter > 0)
    throw new DomainError(
      'RATE_LIMITED',
      'At most 10 endpoint tests a minute per account and per endpoint.',
      [],
      retryAfter,
    );
  const eventId = deps.ids.newId();
  const now = deps.clock.now();
  const body = JSON.stringify(renderExampleEvent(eventType, endpoint.payloadFormat(), eventId, now));
  const tried = await deps.webhookSender.send({
    url: endpoint.url,
    eventId,
    body,
    signatureKeys: keysInForce(endpoint, now),
    asymmetricKeys: pairsInForce(endpoint, now),
    test: true,
    traceparent,
  });
  return {
    delivered: isSuccess(tried.statusCode),
    statusCode: tried.statusCode,
    durationMs: Math.round(tried.durationMs),
    error: tried.error,
  };
}
