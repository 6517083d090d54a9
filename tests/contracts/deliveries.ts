import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { DeliveryResult } from '../../domain/delivery.ts';
import { OutboxEvent } from '../../domain/event.ts';
import { WebhookConfig } from '../../domain/webhook-config.ts';
import { at, account, claimAll, type Run, DAY, NO_HEALTH } from './samples.ts';

/**
 * One behaviour per port of the sender's delivery queue and the delivery log, held by the in-memory fake and the SQL
 * adapters alike.
 */
export function deliveryContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`delivery contract: ${name}`);
  let run: Run;
  test.before(async () => { run = await setup(); });

  test('deliveries: an endpoint\'s own, paged with before; redelivered one (only by its endpoint) or all failed since a time', async () => {
    const brand = account();
    const now = at('2026-06-01T00:00:00.000Z');
    const config = new WebhookConfig({
      id: randomUUID(), accountId: brand.id, scope: 'brand', url: 'https://hooks.example.com/c', transformer: 'default', version: '1.3.0',
      signatureKey: null, enabled: true, ...NO_HEALTH, createdAt: now, updatedAt: now,
    });
    const event = (n: number) => new OutboxEvent({
      id: randomUUID(), accountId: brand.id, scope: 'brand', type: 'OrderStatusEvent', orderId: 'P', payload: { _eid: `p${n}` },
      endpointId: config.id, deliver: true, createdAt: new Date(now.getTime() + n * 1000),
    });
    const events = [event(1), event(2), event(3)];
    await run(async (r) => { await r.accounts.save(brand); await r.webhookConfigs.save(config); await r.events.add(events); });
    const mine = <T extends { eventId: string }>(list: T[]) => list.filter((d) => events.some((e) => e.id === d.eventId));
    const first = mine(await run((r) => r.deliveryLog.list({ endpointId: config.id, limit: 2 })));
    assert.equal(first.map((d) => d.eventId), [events[2]!.id, events[1]!.id], 'newest first');
    const rest = await run((r) => r.deliveryLog.list({ endpointId: config.id, limit: 10, before: { createdAt: first[1]!.createdAt, seq: first[1]!.seq } }));
    assert.equal(rest.map((d) => d.eventId), [events[0]!.id]);

    // All three fail, one after the other (one order: one at a time).
    for (let i = 0; i < 3; i++) {
      const [claimed] = mine(await run((r) => claimAll(r, 1000, new Date(now.getTime() + 10_000), new Date(now.getTime() + 70_000), randomUUID())));
      await run((r) => r.deliveryQueue.record([{ deliveryId: claimed!.id, endpointId: claimed!.endpointId, claimToken: claimed!.claimToken, attempt: { at: now, statusCode: 500, durationMs: 1, error: 'HTTP 500' }, exchange: null, state: { status: 'failed' } }], now, DAY));
    }
    assert.is(await run((r) => r.deliveryLog.redeliver(first[0]!.id, now, randomUUID())), false, 'not by another endpoint');
    const since = events[1]!.createdAt;
    assert.is(await run((r) => r.deliveryLog.redeliverFailed({ endpointId: config.id }, since, new Date(now.getTime() + 20_000))), 2);
    assert.is(await run((r) => r.deliveryLog.redeliverFailed({ endpointId: randomUUID() }, since, now)), 0);
    assert.is(await run((r) => r.deliveryLog.redeliverFailed({ accountId: randomUUID() }, since, now)), 0);
    const log = mine(await run((r) => r.deliveryLog.list({ endpointId: config.id, limit: 10 })));
    assert.equal(log.map((d) => d.status), ['pending', 'pending', 'failed']);
    const claimAt = new Date(now.getTime() + 20_000);
    const again = mine(await run((r) => claimAll(r, 1000, claimAt, new Date(claimAt.getTime() + 60_000), randomUUID())));
    assert.equal(again.map((d) => [d.eventId, d.attempts]), [[events[1]!.id, 1]], 'the earlier of the order first, its attempts continuing');
    await run((r) => r.deliveryQueue.record([{ deliveryId: again[0]!.id, endpointId: again[0]!.endpointId, claimToken: again[0]!.claimToken, attempt: { at: claimAt, statusCode: 200, durationMs: 1, error: null }, exchange: null, state: { status: 'delivered' } }], claimAt, DAY));
    const next = mine(await run((r) => claimAll(r, 1000, claimAt, new Date(claimAt.getTime() + 60_000), randomUUID())));
    assert.equal(next.map((d) => d.eventId), [events[2]!.id]);
    await run((r) => r.deliveryQueue.record([{ deliveryId: next[0]!.id, endpointId: next[0]!.endpointId, claimToken: next[0]!.claimToken, attempt: { at: claimAt, statusCode: 200, durationMs: 1, error: null }, exchange: null, state: { status: 'delivered' } }], claimAt, DAY));
  });

  test('deliveries: one order\'s events written in one unit go out in the order written (the feed\'s), one at a time', async () => {
    const brand = account();
    const now = at('2026-06-02T00:00:00.000Z');
    const config = new WebhookConfig({
      id: randomUUID(), accountId: brand.id, scope: 'brand', url: 'https://hooks.example.com/o', transformer: 'default', version: '1.3.0',
      signatureKey: null, enabled: true, ...NO_HEALTH, createdAt: now, updatedAt: now,
    });
    const event = (orderId: string, n: number) => new OutboxEvent({
      id: randomUUID(), accountId: brand.id, scope: 'brand', type: 'OrderStatusEvent', orderId, payload: { _eid: `o${n}`, n },
      endpointId: config.id, deliver: true, createdAt: now,
    });
    // Two orders interleaved in one batch, then more of the first in a later unit: their ids are random, their
    // order is the order they were written in.
    const batch = Array.from({ length: 16 }, (_, n) => event(n % 2 ? 'O2' : 'O1', n));
    const later = [16, 17].map((n) => event('O1', n));
    await run(async (r) => { await r.accounts.save(brand); await r.webhookConfigs.save(config); await r.events.add(batch); });
    await run((r) => r.events.add(later));
    const ours = [...batch, ...later];
    const received: number[] = [];
    for (let round = 0; round < 20; round++) {
      const claimed = (await run((r) => claimAll(r, 1000, now, new Date(now.getTime() + 60_000), randomUUID()))).filter((d) => ours.some((e) => e.id === d.eventId));
      if (claimed.length === 0) break;
      assert.ok(claimed.length <= 2, 'one delivery of each order at a time');
      received.push(...claimed.map((d) => JSON.parse(d.body).n as number));
      await run((r) => r.deliveryQueue.record(claimed.map((d) => ({
        deliveryId: d.id, endpointId: d.endpointId, claimToken: d.claimToken, attempt: { at: now, statusCode: 200, durationMs: 1, error: null }, exchange: null,
        state: { status: 'delivered' as const },
      })), now, DAY));
    }
    const orderOf = (n: number) => ours.find((e) => e.payload.n === n)!.orderId;
    assert.equal(received.filter((n) => orderOf(n) === 'O1'), [0, 2, 4, 6, 8, 10, 12, 14, 16, 17], 'O1 in feed order');
    assert.equal(received.filter((n) => orderOf(n) === 'O2'), [1, 3, 5, 7, 9, 11, 13, 15], 'O2 in feed order');
    assert.is(received.length, 18);
    const feed = await run((r) => r.eventFeed.page(config.id, 0, 100));
    assert.equal(feed.map((e) => JSON.parse(e.payload).n), ours.map((e) => e.payload.n), 'the feed has them in the order written too');
  });

  test('deliveries: a sender holds at most its share of one endpoint; a full endpoint is passed over, newer ones of others are claimed', async () => {
    const [busyBrand, quietBrand] = [account(), account()];
    const now = at('2026-06-03T00:00:00.000Z');
    const endpoint = (brandId: string, name: string) => new WebhookConfig({
      id: randomUUID(), accountId: brandId, scope: 'brand', url: `https://hooks.example.com/${name}`, transformer: 'default', version: '1.3.0',
      signatureKey: null, enabled: true, ...NO_HEALTH, createdAt: now, updatedAt: now,
    });
    const [busy, quiet] = [endpoint(busyBrand.id, 'busy'), endpoint(quietBrand.id, 'quiet')];
    const event = (config: WebhookConfig, n: number) => new OutboxEvent({
      id: randomUUID(), accountId: config.accountId, scope: 'brand', type: 'OrderStatusEvent', orderId: `order-${randomUUID()}`, payload: { _eid: `e${n}`, n },
      endpointId: config.id, deliver: true, createdAt: new Date(now.getTime() + n),
    });
    const busyEvents = Array.from({ length: 10 }, (_, n) => event(busy, n));
    const quietEvents = [event(quiet, 100), event(quiet, 101)];
    await run(async (r) => {
      for (const b of [busyBrand, quietBrand]) await r.accounts.save(b);
      for (const c of [busy, quiet]) await r.webhookConfigs.save(c);
      await r.events.add(busyEvents);
    });
    await run((r) => r.events.add(quietEvents));
    const ours = [...busyEvents, ...quietEvents];
    const claim = (held: Map<string, number>, limit = 100) => run((r) => r.deliveryQueue.claimDue({
      limit, now: new Date(now.getTime() + 1000), leaseUntil: new Date(now.getTime() + 60_000), claimToken: randomUUID(), perEndpoint: 3, held, lookForNew: true,
    })).then((claimed) => claimed.filter((d) => ours.some((e) => e.id === d.eventId)));
    const first = await claim(new Map([[busy.id, 1]]));
    assert.equal(first.map((d) => JSON.parse(d.body).n), [0, 1, 100, 101], 'two more of the busy endpoint (it held one), then the other\'s');
    assert.equal(first.map((d) => d.endpointId), [busy.id, busy.id, quiet.id, quiet.id]);
    const none = await claim(new Map([[busy.id, 3]]));
    assert.equal(none, [], 'a full endpoint is passed over, whatever its backlog');
    const more = await claim(new Map());
    assert.equal(more.map((d) => JSON.parse(d.body).n), [2, 3, 4]);
    await run((r) => r.deliveryQueue.record([...first, ...more].map((d) => ({
      deliveryId: d.id, endpointId: d.endpointId, claimToken: d.claimToken, attempt: { at: now, statusCode: 200, durationMs: 1, error: null }, exchange: null,
      state: { status: 'delivered' as const },
    })), now, DAY));
    // Leave nothing pending for the workers of later suites on a shared database.
    for (let round = 0; round < 5; round++) {
      const left = await claim(new Map());
      await run((r) => r.deliveryQueue.record(left.map((d) => ({
        deliveryId: d.id, endpointId: d.endpointId, claimToken: d.claimToken, attempt: { at: now, statusCode: 200, durationMs: 1, error: null }, exchange: null,
        state: { status: 'delivered' as const },
      })), now, DAY));
    }
  });

  test('deliveries: a record holding a lost claim\'s outcome beside the current one\'s counts the current one only', async () => {
    // A record put back after the database failed, then sent with the one made after the lease ran out and the
    // delivery was claimed and sent again: both outcomes of one delivery in one batch.
    const brand = account();
    const now = at('2026-06-04T00:00:00.000Z');
    const config = new WebhookConfig({
      id: randomUUID(), accountId: brand.id, scope: 'brand', url: 'https://hooks.example.com/twice', transformer: 'default', version: '1.3.0',
      signatureKey: null, enabled: true, ...NO_HEALTH, createdAt: now, updatedAt: now,
    });
    const event = new OutboxEvent({
      id: randomUUID(), accountId: brand.id, scope: 'brand', type: 'OrderStatusEvent', orderId: 'twice', payload: { _eid: 'twice' },
      endpointId: config.id, deliver: true, createdAt: now,
    });
    await run(async (r) => { await r.accounts.save(brand); await r.webhookConfigs.save(config); await r.events.add([event]); });
    const claim = (from: number) => run((r) => claimAll(r, 1000, new Date(now.getTime() + from), new Date(now.getTime() + from + 60_000), randomUUID()))
      .then((claimed) => claimed.filter((d) => d.eventId === event.id));
    const [lost] = await claim(0);
    const [current] = await claim(60_001);
    assert.ok(lost && current && lost.claimToken !== current.claimToken, 'claimed over after the lease');
    const outcome = (d: typeof lost, state: DeliveryResult['state']): DeliveryResult => ({
      deliveryId: d!.id, endpointId: d!.endpointId, claimToken: d!.claimToken, attempt: { at: now, statusCode: 500, durationMs: 1, error: 'x' }, exchange: null, state,
    });
    await run((r) => r.deliveryQueue.record([
      outcome(current, { status: 'delivered' }), outcome(lost, { status: 'pending', nextAttemptAt: new Date(now.getTime() + DAY) }),
    ], now, DAY));
    const [logged] = await run((r) => r.deliveryLog.list({ endpointId: config.id, limit: 1 }));
    assert.equal([logged!.status, logged!.nextAttemptAt, logged!.attempts.length], ['delivered', null, 2], 'the current claim\'s outcome, both attempts logged');
    assert.equal(await claim(DAY + 1), [], 'and nothing left to send');
  });

  test('deliveries: a claim carries the endpoint\'s rotated-out key and its end, as stored now', async () => {
    const brand = account();
    const now = at('2026-04-02T00:00:00.000Z');
    const previousKey = { value: 'the-old-key-0123456789', expiresAt: at('2026-04-02T01:00:00.000Z') };
    const config = new WebhookConfig({
      id: randomUUID(), accountId: brand.id, scope: 'brand', url: 'https://hooks.example.com/r', transformer: 'default', version: '1.3.0',
      signatureKey: 'the-new-key-0123456789', previousKey, enabled: true, ...NO_HEALTH, createdAt: now, updatedAt: now,
    });
    const event = new OutboxEvent({
      id: randomUUID(), accountId: brand.id, scope: 'brand', type: 'OrderStatusEvent', orderId: randomUUID(), payload: { _eid: 'r' },
      endpointId: config.id, deliver: true, createdAt: now,
    });
    await run(async (r) => { await r.accounts.save(brand); await r.webhookConfigs.save(config); await r.events.add([event]); });
    const claimed = (await run((r) => claimAll(r, 1000, now, new Date(now.getTime() + 60_000), randomUUID()))).filter((d) => d.eventId === event.id);
    assert.equal(claimed.map((d) => d.endpoint), [{
      url: 'https://hooks.example.com/r', enabled: true, signatureKey: 'the-new-key-0123456789', previousKey, asymmetricSigning: false, signingPair: null, previousPair: null,
    }]);
    await run((r) => r.deliveryQueue.record([{ deliveryId: claimed[0]!.id, endpointId: claimed[0]!.endpointId, claimToken: claimed[0]!.claimToken, attempt: { at: now, statusCode: 200, durationMs: 1, error: null }, exchange: null, state: { status: 'delivered' } }], now, DAY));
  });

  test('deliveries: made for events to be delivered; claimed due, oldest first, one order at a time per endpoint', async () => {
    const brand = account();
    const now = at('2026-04-01T00:00:00.000Z');
    const later = (ms: number) => new Date(now.getTime() + ms);
    const config = new WebhookConfig({
      id: randomUUID(), accountId: brand.id, scope: 'brand', url: 'https://hooks.example.com/b', transformer: 'default', version: '1.3.0',
      signatureKey: 'k-0123456789abcdef', enabled: true, ...NO_HEALTH, createdAt: now, updatedAt: now,
    });
    const event = (orderId: string | null, deliver = true) => new OutboxEvent({
      id: randomUUID(), accountId: brand.id, scope: 'brand', type: 'OrderStatusEvent', orderId, payload: { _eid: 'x', orderId },
      endpointId: config.id, deliver, createdAt: now,
    });
    const [x1, x2, y1, none, x3] = [event('X'), event('X'), event('Y'), event('Z', false), event('X')];
    await run(async (r) => { await r.accounts.save(brand); await r.webhookConfigs.save(config); await r.events.add([x1!, x2!, y1!, none!]); });
    await run((r) => r.events.add([x3!]));
    const mine = <T extends { eventId: string }>(list: T[]) => list.filter((d) => [x1, x2, y1, none, x3].some((e) => e!.id === d.eventId));

    const claim = (at: Date, until: Date, token = randomUUID()) => run((r) => claimAll(r, 1000, at, until, token)).then(mine);
    const outcome = (d: { id: string; endpointId: string; claimToken: string }, at: Date, statusCode: number | null, state: DeliveryResult['state']): DeliveryResult =>
      ({ deliveryId: d.id, endpointId: d.endpointId, claimToken: d.claimToken, attempt: { at, statusCode, durationMs: 3, error: statusCode === 200 ? null : 'failed' }, exchange: null, state });

    let first = await claim(now, later(60_000));
    assert.equal(first.map((d) => d.eventId), [x1!.id, y1!.id], 'one per order, in order; none for an event not to be delivered');
    assert.equal(first[0]!.endpoint, {
      url: 'https://hooks.example.com/b', enabled: true, signatureKey: 'k-0123456789abcdef', previousKey: null, asymmetricSigning: false, signingPair: null, previousPair: null,
    });
    assert.equal([first[0]!.leaseUntil, typeof first[0]!.claimToken], [later(60_000), 'string']);
    assert.equal(JSON.parse(first[0]!.body), x1!.payload);
    assert.equal(await claim(now, later(60_000)), [], 'claimed ones are held');
    await run((r) => r.deliveryQueue.release([{ id: first[1]!.id, claimToken: randomUUID() }]));
    assert.equal(await claim(now, later(60_000)), [], 'a release with another claim\'s token changes nothing');
    await run((r) => r.deliveryQueue.release([first[1]!]));
    const reclaimed = await claim(now, later(60_000));
    assert.equal(reclaimed.map((d) => d.eventId), [y1!.id], 'a released claim is due again at once');
    first = [first[0]!, reclaimed[0]!];

    // X1's lease runs out mid-send and another sender claims it over: the first sender's outcome is only logged.
    const over = await claim(later(60_001), later(120_000));
    assert.equal(over.map((d) => d.eventId), [x1!.id, y1!.id], 'expired leases are claimed over');
    await run((r) => r.deliveryQueue.record([outcome(first[0]!, later(60_002), 200, { status: 'delivered' })], later(60_002), DAY));
    assert.equal(await claim(later(60_003), later(120_000)), [], 'a stale claim\'s success does not release X2');
    assert.is(await run((r) => r.deliveryLog.redeliver(over[0]!.id, later(60_004))), true);
    assert.equal(await claim(later(60_005), later(120_000)), [], 'a delivery being sent is not redelivered under its sender');

    const failedAt = later(60_010);
    await run((r) => r.deliveryQueue.record([
      outcome(over[0]!, failedAt, 500, { status: 'pending', nextAttemptAt: later(65_000) }),
      outcome(over[1]!, failedAt, 200, { status: 'delivered' }),
    ], failedAt, DAY));
    assert.equal(await claim(later(60_100), later(120_000)), [], 'X2 waits while X1 waits for its retry');
    assert.is(await run((r) => r.deliveryLog.redeliver(over[0]!.id, later(60_200))), true);
    const early = await claim(later(60_200), later(120_000));
    assert.equal(early.map((d) => [d.eventId, d.attempts]), [[x1!.id, 1]], 'redelivering one that waits for its retry sends it now');
    await run((r) => r.deliveryQueue.release(early));
    const retried = await claim(later(65_000), later(125_000));
    assert.equal(retried.map((d) => [d.eventId, d.attempts]), [[x1!.id, 1]], 'the stale outcome did not count as an attempt');
    await run((r) => r.deliveryQueue.record([outcome(retried[0]!, later(65_001), null, { status: 'failed' })], later(65_001), DAY));
    const released = await claim(later(65_002), later(125_000));
    assert.equal(released.map((d) => d.eventId), [x2!.id], 'a failed delivery releases the next of its order');
    await run((r) => r.deliveryQueue.record([outcome(released[0]!, later(65_003), 200, { status: 'delivered' })], later(65_003), DAY));

    const log = await run((r) => r.deliveryLog.list({ accountId: brand.id, limit: 10 }));
    const x1Log = log.find((d) => d.eventId === x1!.id)!;
    assert.equal([x1Log.status, x1Log.attempts.map((a) => a.statusCode), x1Log.nextAttemptAt, x1Log.url], ['failed', [200, 500, null], null, 'https://hooks.example.com/b']);
    assert.equal((await run((r) => r.deliveryLog.list({ accountId: brand.id, status: 'delivered', limit: 10 }))).map((d) => d.eventId), [y1!.id, x2!.id]);
    assert.is(await run((r) => r.deliveryLog.redeliver(x1Log.id, later(66_000))), true);
    assert.is(await run((r) => r.deliveryLog.redeliver(randomUUID(), later(66_000))), false);
    const again = (await run((r) => r.deliveryLog.list({ accountId: brand.id, limit: 10 }))).find((d) => d.id === x1Log.id)!;
    assert.equal([again.status, again.attempts.length, again.nextAttemptAt], ['pending', 3, later(66_000)]);

    // Retention: finished deliveries of old events go with their events; a pending one and its event stay.
    const purged = await run((r) => r.deliveryLog.purgeBefore(later(1), 1000));
    assert.ok(purged >= 2, 'the finished ones are purged');
    const left = mine(await run((r) => r.deliveryLog.list({ accountId: brand.id, limit: 10 })));
    assert.equal(left.map((d) => [d.eventId, d.status]), [[x3!.id, 'pending'], [x1!.id, 'pending']], 'pending deliveries are kept');
    // Leave nothing pending for the workers of later suites on a shared database.
    for (const step of [1, 2]) {
      const pending = await claim(later(66_000 + step), later(126_000));
      await run((r) => r.deliveryQueue.record(pending.map((d) => outcome(d, later(66_000 + step), null, { status: 'failed' })), later(66_000 + step), DAY));
    }
    assert.equal(mine(await run((r) => r.deliveryLog.list({ accountId: brand.id, status: 'pending', limit: 10 }))), []);
  });

  test.run();
}
