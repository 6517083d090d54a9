import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AttemptExchange, ClaimedDelivery, DeliveryResult } from '../../domain/delivery.ts';
import { OutboxEvent } from '../../domain/event.ts';
import { WebhookConfig } from '../../domain/webhook-config.ts';
import { at, account, DAY, NO_HEALTH, type Run } from './samples.ts';

/**
 * What the record of attempts does to its endpoints (CONTRACT §11), held by the fake (which runs judgeEndpoint) and the
 * SQL (which mirrors it), and what it keeps of each attempt.
 */
export function endpointHealthContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`endpoint health contract: ${name}`);
  let run: Run;
  test.before(async () => { run = await setup(); });

  const now = at('2026-03-01T00:00:00.000Z');
  const later = (ms: number) => new Date(now.getTime() + ms);

  /** An endpoint with `count` deliveries of orders of their own, all claimed. */
  async function endpointWithClaims(count: number) {
    const brand = account();
    const config = new WebhookConfig({
      id: randomUUID(), accountId: brand.id, scope: 'brand', url: `https://hooks.example.com/${randomUUID()}`, transformer: 'default', version: '1.3.0',
      signatureKey: null, enabled: true, ...NO_HEALTH, createdAt: now, updatedAt: now,
    });
    const events = Array.from({ length: count }, (_, i) => new OutboxEvent({
      id: randomUUID(), accountId: brand.id, scope: 'brand', type: 'OrderStatusEvent', orderId: `order-${i}`, payload: { _eid: 'x', n: i },
      endpointId: config.id, deliver: true, createdAt: now,
    }));
    await run(async (r) => { await r.accounts.save(brand); await r.webhookConfigs.save(config); await r.events.add(events); });
    const claimed = (await run((r) => r.deliveries.claimDue(1000, now, later(DAY), randomUUID())))
      .filter((d) => events.some((e) => e.id === d.eventId))
      .sort((a, b) => events.findIndex((e) => e.id === a.eventId) - events.findIndex((e) => e.id === b.eventId));
    assert.is(claimed.length, count);
    return { brand, config, claimed };
  }

  const exchange = (url: string, statusCode: number | null): AttemptExchange => ({
    request: { url, headers: { 'content-type': 'application/json', 'webhook-id': 'x' } },
    response: statusCode === null ? null : { headers: { 'content-type': 'text/plain' }, body: `answer ${statusCode}` },
  });
  const result = (d: ClaimedDelivery, url: string, atMs: number, statusCode: number | null, state: DeliveryResult['state']): DeliveryResult => ({
    deliveryId: d.id, claimToken: d.claimToken, attempt: { at: later(atMs), statusCode, durationMs: 2, error: statusCode === 200 ? null : 'failed' },
    exchange: exchange(url, statusCode), state,
  });
  const health = async (accountId: string) => {
    const c = (await run((r) => r.webhookConfigs.find(accountId, 'brand')))!;
    return { failingSince: c.failingSince, enabled: c.enabled, disabledReason: c.disabledReason, failureMailedAt: c.failureMailedAt };
  };

  test('failing from the first failure after the last 2xx; a delivery ending failed warns once a day, then disables', async () => {
    const { brand, config, claimed: [d1, d2, d3, d4, d5] } = await endpointWithClaims(5);
    const url = config.url!;
    // One batch: a failure, a 2xx after it, then a failure that ends its delivery: failing since the last failure.
    const notices = await run((r) => r.deliveries.record([
      result(d1!, url, 1000, 500, { status: 'pending', nextAttemptAt: later(DAY * 10) }),
      result(d2!, url, 2000, 200, { status: 'delivered' }),
      result(d3!, url, 3000, null, { status: 'failed' }),
    ], later(4000), 5 * DAY));
    assert.equal(notices, [{ kind: 'failing', endpointId: config.id, accountId: brand.id, url, failingSince: later(3000), failedDeliveries: 1 }]);
    assert.equal(await health(brand.id), { failingSince: later(3000), enabled: true, disabledReason: null, failureMailedAt: later(4000) });

    // Another failed delivery within the day: still failing since then, no notice.
    assert.equal(await run((r) => r.deliveries.record([result(d4!, url, DAY - 1, 500, { status: 'failed' })], later(DAY - 1), 5 * DAY)), []);
    // Five days after it began failing, the next delivery to end failed disables it.
    const disabled = await run((r) => r.deliveries.record([result(d5!, url, 5 * DAY + 3000, 500, { status: 'failed' })], later(5 * DAY + 3000), 5 * DAY));
    assert.equal(disabled, [{ kind: 'disabled', endpointId: config.id, accountId: brand.id, url, failingSince: later(3000), failedDeliveries: 3 }]);
    assert.equal(await health(brand.id), { failingSince: later(3000), enabled: false, disabledReason: 'failing', failureMailedAt: later(5 * DAY + 3000) });
  });

  test('a 2xx clears failingSince; a pending retry neither warns nor disables; an attempt never sent says nothing of health', async () => {
    const { brand, config, claimed: [d1, d2, d3] } = await endpointWithClaims(3);
    const url = config.url!;
    assert.equal(await run((r) => r.deliveries.record([result(d1!, url, 1000, 503, { status: 'pending', nextAttemptAt: later(DAY * 10) })], later(1000), 0)), []);
    assert.equal((await health(brand.id)).failingSince, later(1000));
    const unsent: DeliveryResult = { ...result(d2!, url, 2000, null, { status: 'failed' }), exchange: null };
    await run((r) => r.deliveries.record([unsent, result(d3!, url, 2500, 204, { status: 'delivered' })], later(3000), 0));
    assert.equal(await health(brand.id), { failingSince: null, enabled: true, disabledReason: null, failureMailedAt: null });
  });

  test('each attempt keeps its request and answer, read back by get (of its endpoint only) and never listed', async () => {
    const { brand, config, claimed: [d1] } = await endpointWithClaims(1);
    const url = config.url!;
    await run((r) => r.deliveries.record([
      { ...result(d1!, url, 1000, null, { status: 'pending', nextAttemptAt: later(DAY * 10) }) },
    ], later(1000), DAY));
    const detail = await run((r) => r.deliveries.get(d1!.id, config.id));
    assert.ok(detail);
    assert.equal([detail.payload, detail.endpointId, detail.status], [d1!.body, config.id, 'pending']);
    assert.equal(detail.attempts.map((a) => [a.statusCode, a.request, a.response]), [[null, exchange(url, null).request, null]]);
    assert.is(await run((r) => r.deliveries.get(d1!.id, randomUUID())), null, 'another endpoint\'s');
    assert.is(await run((r) => r.deliveries.get('not-an-id')), null);
    const [listed] = await run((r) => r.deliveries.list({ accountId: brand.id, limit: 5 }));
    assert.equal(Object.keys(listed!.attempts[0]!).sort(), ['at', 'durationMs', 'error', 'statusCode']);
  });

  test.run();
}
