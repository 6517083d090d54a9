// The endpoints with claimed deliveries, the attempts and the health reads that the endpoint health suites share
// (endpoint-health.ts, endpoint-health-records.ts).
import { randomUUID } from 'node:crypto';
import * as assert from 'uvu/assert';
import type { AttemptExchange, ClaimedDelivery, DeliveryResult } from '../../domain/delivery.ts';
import { WebhookConfig } from '../../domain/webhook-config.ts';
import { account, at, claimAll, DAY, NO_HEALTH, orderEvent, type Run, saveWithEvents } from './samples.ts';

/** A suite's samples: they work through the unit of work its `before` makes, which `current` gives once made. */
export function endpointHealthSamples(current: () => Run) {
  const run: Run = (work) => current()(work);
  const now = at('2026-03-01T00:00:00.000Z');
  const later = (ms: number) => new Date(now.getTime() + ms);

  /** An endpoint with `count` deliveries of orders of their own, all claimed. */
  async function endpointWithClaims(count: number, signatureKey: string | null = null) {
    const brand = account();
    const config = new WebhookConfig({
      id: randomUUID(),
      accountId: brand.id,
      scope: 'brand',
      url: `https://hooks.example.com/${randomUUID()}`,
      transformer: 'default',
      version: '1.3.0',
      signatureKey,
      enabled: true,
      ...NO_HEALTH,
      createdAt: now,
      updatedAt: now,
    });
    const events = Array.from({ length: count }, (_, i) => orderEvent(config, `order-${i}`, now, { _eid: 'x', n: i }));
    await saveWithEvents(run, brand, config, events);
    const claimed = (await run((r) => claimAll(r, 1000, now, later(DAY), randomUUID())))
      .filter((d) => events.some((e) => e.id === d.eventId))
      .sort((a, b) => events.findIndex((e) => e.id === a.eventId) - events.findIndex((e) => e.id === b.eventId));
    assert.is(claimed.length, count);
    return { brand, config, claimed };
  }

  const exchange = (url: string, statusCode: number | null): AttemptExchange => ({
    request: { url, headers: { 'content-type': 'application/json', 'webhook-id': 'x' } },
    response: statusCode === null ? null : { headers: { 'content-type': 'text/plain' }, body: `answer ${statusCode}` },
  });
  const result = (
    d: ClaimedDelivery,
    url: string,
    atMs: number,
    statusCode: number | null,
    state: DeliveryResult['state'],
  ): DeliveryResult => ({
    deliveryId: d.id,
    endpointId: d.endpointId,
    claimToken: d.claimToken,
    createdAt: d.createdAt,
    attempt: { at: later(atMs), statusCode, durationMs: 2, error: statusCode === 200 ? null : 'failed' },
    exchange: exchange(url, statusCode),
    state,
  });
  const health = async (accountId: string) => {
    const c = (await run((r) => r.webhookConfigs.find(accountId, 'brand')))!;
    return {
      failingSince: c.failingSince,
      enabled: c.enabled,
      disabledReason: c.disabledReason,
      failureMailedAt: c.failureMailedAt,
    };
  };
  return { later, endpointWithClaims, exchange, result, health };
}
