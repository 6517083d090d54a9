import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AttemptExchange, ClaimedDelivery, DeliveryResult } from '../../domain/delivery.ts';
import { OutboxEvent } from '../../domain/event.ts';
import { WebhookConfig } from '../../domain/webhook-config.ts';
import { at, account, claimAll, DAY, NO_HEALTH, type Run } from './samples.ts';

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
  async function endpointWithClaims(count: number, signatureKey: string | null = null) {
    const brand = account();
    const config = new WebhookConfig({
      id: randomUUID(), accountId: brand.id, scope: 'brand', url: `https://hooks.example.com/${randomUUID()}`, transformer: 'default', version: '1.3.0',
      signatureKey, enabled: true, ...NO_HEALTH, createdAt: now, updatedAt: now,
    });
    const events = Array.from({ length: count }, (_, i) => new OutboxEvent({
      id: randomUUID(), accountId: brand.id, scope: 'brand', type: 'OrderStatusEvent', orderId: `order-${i}`, payload: { _eid: 'x', n: i },
      endpointId: config.id, deliver: true, createdAt: now,
    }));
    await run(async (r) => { await r.accounts.save(brand); await r.webhookConfigs.save(config); await r.events.add(events); });
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
  const result = (d: ClaimedDelivery, url: string, atMs: number, statusCode: number | null, state: DeliveryResult['state']): DeliveryResult => ({
    deliveryId: d.id, endpointId: d.endpointId, claimToken: d.claimToken, attempt: { at: later(atMs), statusCode, durationMs: 2, error: statusCode === 200 ? null : 'failed' },
    exchange: exchange(url, statusCode), state,
  });
  const health = async (accountId: string) => {
    const c = (await run((r) => r.webhookConfigs.find(accountId, 'brand')))!;
    return { failingSince: c.failingSince, enabled: c.enabled, disabledReason: c.disabledReason, failureMailedAt: c.failureMailedAt };
  };

  test('failing from the first failure after the last 2xx; a delivery ending failed warns once while it fails, then disables', async () => {
    const { brand, config, claimed: [d1, d2, d3, d4, d5] } = await endpointWithClaims(5);
    const url = config.url!;
    // One batch: a failure, a 2xx after it, then a failure that ends its delivery: failing since the last failure.
    const notices = await run((r) => r.deliveryQueue.record([
      result(d1!, url, 1000, 500, { status: 'pending', nextAttemptAt: later(DAY * 10) }),
      result(d2!, url, 2000, 200, { status: 'delivered' }),
      result(d3!, url, 3000, null, { status: 'failed' }),
    ], later(4000), 5 * DAY));
    assert.equal(notices, [{ kind: 'failing', endpointId: config.id, accountId: brand.id, url, failingSince: later(3000), failedDeliveries: 1 }]);
    assert.equal(await health(brand.id), { failingSince: later(3000), enabled: true, disabledReason: null, failureMailedAt: later(4000) });

    // Another failed delivery two days on: still failing since then, and warned of it already: no notice.
    assert.equal(await run((r) => r.deliveryQueue.record([result(d4!, url, 2 * DAY, 500, { status: 'failed' })], later(2 * DAY), 5 * DAY)), []);
    // Five days after it began failing, the next delivery to end failed disables it.
    const disabled = await run((r) => r.deliveryQueue.record([result(d5!, url, 5 * DAY + 3000, 500, { status: 'failed' })], later(5 * DAY + 3000), 5 * DAY));
    assert.equal(disabled, [{ kind: 'disabled', endpointId: config.id, accountId: brand.id, url, failingSince: later(3000), failedDeliveries: 3 }]);
    assert.equal(await health(brand.id), { failingSince: later(3000), enabled: false, disabledReason: 'failing', failureMailedAt: later(5 * DAY + 3000) });
  });

  test('a failing period warns once: one that starts again within the day of the last mail sends none; one after it does', async () => {
    const { brand, config, claimed: [d1, d2, d3, d4, d5] } = await endpointWithClaims(5);
    const url = config.url!;
    const fail = (d: ClaimedDelivery, atMs: number) => run((r) => r.deliveryQueue.record([result(d, url, atMs, 500, { status: 'failed' })], later(atMs), 5 * DAY));
    assert.equal((await fail(d1!, 1000)).map((n) => n.kind), ['failing']);
    await run((r) => r.deliveryQueue.record([result(d2!, url, 2000, 200, { status: 'delivered' })], later(2000), 5 * DAY));
    assert.equal(await fail(d3!, 3000), [], 'failing again within the day of the mail');
    assert.equal((await health(brand.id)).failingSince, later(3000));
    await run((r) => r.deliveryQueue.record([result(d4!, url, DAY + 4000, 200, { status: 'delivered' })], later(DAY + 4000), 5 * DAY));
    const again = await fail(d5!, DAY + 5000);
    assert.equal(again.map((n) => [n.kind, n.failingSince]), [['failing', later(DAY + 5000)]], 'a new period a day after the mail');
    assert.equal((await health(brand.id)).failureMailedAt, later(DAY + 5000));
  });

  test('a new failing period is mailed about only a full day after the last mail: not 12 h, nor a second short of a day, on', async () => {
    const { brand, config, claimed: [d1, d2, d3, d4, d5, d6, d7] } = await endpointWithClaims(7);
    const url = config.url!;
    const record = (d: ClaimedDelivery, atMs: number, statusCode: number, state: DeliveryResult['state']) =>
      run((r) => r.deliveryQueue.record([result(d, url, atMs, statusCode, state)], later(atMs), 5 * DAY));
    const fail = async (d: ClaimedDelivery, atMs: number) => (await record(d, atMs, 500, { status: 'failed' })).map((n) => n.kind);
    const ok = (d: ClaimedDelivery, atMs: number) => record(d, atMs, 200, { status: 'delivered' });
    assert.equal(await fail(d1!, 1000), ['failing'], 'the first mail');
    // Each period ends with a 2xx, so that the next failure starts a new one: only the day since the mail holds it back.
    await ok(d2!, 2000);
    assert.equal(await fail(d3!, DAY / 2 + 1000), [], '12 h after the mail');
    await ok(d4!, DAY / 2 + 2000);
    assert.equal(await fail(d5!, DAY), [], 'a second short of a day after the mail');
    assert.equal(await health(brand.id), { failingSince: later(DAY), enabled: true, disabledReason: null, failureMailedAt: later(1000) });
    await ok(d6!, DAY + 500);
    assert.equal(await fail(d7!, DAY + 1000), ['failing'], 'a day after the mail');
    assert.equal((await health(brand.id)).failureMailedAt, later(DAY + 1000));
  });

  test('a 2xx clears failingSince; a pending retry neither warns nor disables; an attempt never sent says nothing of health', async () => {
    const { brand, config, claimed: [d1, d2, d3] } = await endpointWithClaims(3);
    const url = config.url!;
    assert.equal(await run((r) => r.deliveryQueue.record([result(d1!, url, 1000, 503, { status: 'pending', nextAttemptAt: later(DAY * 10) })], later(1000), 0)), []);
    assert.equal((await health(brand.id)).failingSince, later(1000));
    const unsent: DeliveryResult = { ...result(d2!, url, 2000, null, { status: 'failed' }), exchange: null };
    await run((r) => r.deliveryQueue.record([unsent, result(d3!, url, 2500, 204, { status: 'delivered' })], later(3000), 0));
    assert.equal(await health(brand.id), { failingSince: null, enabled: true, disabledReason: null, failureMailedAt: null });
  });

  test('a rotation read before a disable writes only its keys: the endpoint stays disabled', async () => {
    const OLD = 'the-old-signing-key-0123456789';
    const NEW = 'the-new-signing-key-0123456789';
    const { brand, config, claimed: [d1] } = await endpointWithClaims(1, OLD);
    const read = (await run((r) => r.webhookConfigs.find(brand.id, 'brand')))!;
    const disabled = await run((r) => r.deliveryQueue.record([result(d1!, config.url!, 1000, 500, { status: 'failed' })], later(5 * DAY + 1000), 5 * DAY));
    assert.equal(disabled.map((n) => n.kind), ['disabled']);
    read.rotateKey(NEW, 60, later(5 * DAY + 2000));
    read.updatedAt = later(5 * DAY + 2000);
    await run((r) => r.webhookConfigs.saveKeys(read));
    assert.equal(await health(brand.id), { failingSince: later(1000), enabled: false, disabledReason: 'failing', failureMailedAt: later(5 * DAY + 1000) });
    const stored = (await run((r) => r.webhookConfigs.find(brand.id, 'brand')))!;
    assert.equal([stored.signatureKey, stored.previousKey, stored.updatedAt],
      [NEW, { value: OLD, expiresAt: later(5 * DAY + 62_000) }, later(5 * DAY + 2000)]);
  });

  test('a batch recorded after a later failure: its older 2xx does not end the failing, its failures after the 2xx count', async () => {
    const { brand, config, claimed: [d1, d2, d3, d4] } = await endpointWithClaims(4);
    const url = config.url!;
    const pending = { status: 'pending', nextAttemptAt: later(DAY * 10) } as const;
    await run((r) => r.deliveryQueue.record([result(d1!, url, 5000, 500, pending)], later(5000), 5 * DAY));
    await run((r) => r.deliveryQueue.record([result(d2!, url, 3000, 200, { status: 'delivered' })], later(6000), 5 * DAY));
    assert.equal((await health(brand.id)).failingSince, later(5000), 'the 2xx came before the failure');
    await run((r) => r.deliveryQueue.record([result(d3!, url, 2000, 200, { status: 'delivered' }), result(d4!, url, 4000, 500, pending)], later(7000), 5 * DAY));
    assert.equal((await health(brand.id)).failingSince, later(4000), 'a failure after the batch\'s 2xx and before the stored one');
  });

  test('tries sent to the URL the endpoint had before say nothing of the one it has now', async () => {
    const { brand, claimed: [d1, d2] } = await endpointWithClaims(2);
    const old = 'https://hooks.example.com/the-url-before';
    const notices = await run((r) => r.deliveryQueue.record([
      result(d1!, old, 1000, 500, { status: 'failed' }), result(d2!, old, 2000, null, { status: 'pending', nextAttemptAt: later(DAY) }),
    ], later(6 * DAY), 5 * DAY));
    assert.equal(notices, []);
    assert.equal(await health(brand.id), { failingSince: null, enabled: true, disabledReason: null, failureMailedAt: null });
  });

  test('each attempt keeps its request and answer, read back by get (of its endpoint only) and never listed', async () => {
    const { brand, config, claimed: [d1] } = await endpointWithClaims(1);
    const url = config.url!;
    await run((r) => r.deliveryQueue.record([
      { ...result(d1!, url, 1000, null, { status: 'pending', nextAttemptAt: later(DAY * 10) }) },
    ], later(1000), DAY));
    const detail = await run((r) => r.deliveryLog.get(d1!.id, config.id));
    assert.ok(detail);
    assert.equal([detail.payload, detail.endpointId, detail.status], [d1!.body, config.id, 'pending']);
    assert.equal(detail.attempts.map((a) => [a.statusCode, a.request, a.response]), [[null, exchange(url, null).request, null]]);
    assert.is(await run((r) => r.deliveryLog.get(d1!.id, randomUUID())), null, 'another endpoint\'s');
    assert.is(await run((r) => r.deliveryLog.get('not-an-id')), null);
    const [listed] = await run((r) => r.deliveryLog.list({ accountId: brand.id, limit: 5 }));
    assert.equal(Object.keys(listed!.attempts[0]!).sort(), ['at', 'durationMs', 'error', 'statusCode']);
  });

  test.run();
}
