import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { DeliveryResult } from '../../domain/delivery.ts';
import { OutboxEvent } from '../../domain/event.ts';
import { WebhookConfig } from '../../domain/webhook-config.ts';
import { account, at, claimAll, DAY, NO_HEALTH, orderEvent, type Run, saveWithEvents } from './samples.ts';

/**
 * One behaviour per port of the sender's delivery queue and the delivery log, held by the in-memory fake and the SQL
 * adapters alike (an endpoint's own deliveries: deliveries-by-endpoint.ts; what a claim takes: deliveries-claims.ts).
 */
export function deliveryContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`delivery contract: ${name}`);
  let run: Run;
  test.before(async () => {
    run = await setup();
  });

  test("deliveries: a claim carries the endpoint's rotated-out key and its end, as stored now", async () => {
    const brand = account();
    const now = at('2026-04-02T00:00:00.000Z');
    const previousKey = { value: 'the-old-key-0123456789', expiresAt: at('2026-04-02T01:00:00.000Z') };
    const config = new WebhookConfig({
      id: randomUUID(),
      accountId: brand.id,
      scope: 'brand',
      url: 'https://hooks.example.com/r',
      transformer: 'default',
      version: '1.3.0',
      signatureKey: 'the-new-key-0123456789',
      previousKey,
      enabled: true,
      ...NO_HEALTH,
      createdAt: now,
      updatedAt: now,
    });
    const event = orderEvent(config, randomUUID(), now, { _eid: 'r' });
    await saveWithEvents(run, brand, config, [event]);
    const claimed = (await run((r) => claimAll(r, 1000, now, new Date(now.getTime() + 60_000), randomUUID()))).filter(
      (d) => d.eventId === event.id,
    );
    assert.equal(
      claimed.map((d) => d.endpoint),
      [
        {
          url: 'https://hooks.example.com/r',
          enabled: true,
          failingSince: null,
          signatureKey: 'the-new-key-0123456789',
          previousKey,
          asymmetricSigning: false,
          signingPair: null,
          previousPair: null,
        },
      ],
    );
    await run((r) =>
      r.deliveryQueue.record(
        [
          {
            deliveryId: claimed[0]!.id,
            endpointId: claimed[0]!.endpointId,
            claimToken: claimed[0]!.claimToken,
            createdAt: claimed[0]!.createdAt,
            attempt: { at: now, statusCode: 200, durationMs: 1, error: null },
            exchange: null,
            state: { status: 'delivered' },
          },
        ],
        now,
        DAY,
      ),
    );
  });

  test('deliveries: made for events to be delivered; claimed due, oldest first, one order at a time per endpoint', async () => {
    const brand = account();
    const now = at('2026-04-01T00:00:00.000Z');
    const later = (ms: number) => new Date(now.getTime() + ms);
    const config = new WebhookConfig({
      id: randomUUID(),
      accountId: brand.id,
      scope: 'brand',
      url: 'https://hooks.example.com/b',
      transformer: 'default',
      version: '1.3.0',
      signatureKey: 'k-0123456789abcdef',
      enabled: true,
      ...NO_HEALTH,
      createdAt: now,
      updatedAt: now,
    });
    const event = (orderId: string | null, deliver = true) =>
      new OutboxEvent({
        id: randomUUID(),
        accountId: brand.id,
        scope: 'brand',
        type: 'OrderStatusEvent',
        orderId,
        payload: { _eid: 'x', orderId },
        endpointId: config.id,
        deliver,
        createdAt: now,
      });
    const [x1, x2, y1, none, x3] = [event('X'), event('X'), event('Y'), event('Z', false), event('X')];
    await run(async (r) => {
      await r.accounts.save(brand);
      await r.webhookConfigs.save(config);
      await r.events.add([x1!, x2!, y1!, none!]);
    });
    await run((r) => r.events.add([x3!]));
    const mine = <T extends { eventId: string }>(list: T[]) =>
      list.filter((d) => [x1, x2, y1, none, x3].some((e) => e!.id === d.eventId));

    const claim = (at: Date, until: Date, token = randomUUID()) =>
      run((r) => claimAll(r, 1000, at, until, token)).then(mine);
    const outcome = (
      d: { id: string; endpointId: string; claimToken: string; createdAt: Date },
      at: Date,
      statusCode: number | null,
      state: DeliveryResult['state'],
    ): DeliveryResult => ({
      deliveryId: d.id,
      endpointId: d.endpointId,
      claimToken: d.claimToken,
      createdAt: d.createdAt,
      attempt: { at, statusCode, durationMs: 3, error: statusCode === 200 ? null : 'failed' },
      exchange: null,
      state,
    });

    let first = await claim(now, later(60_000));
    assert.equal(
      first.map((d) => d.eventId),
      [x1!.id, y1!.id],
      'one per order, in order; none for an event not to be delivered',
    );
    assert.equal(first[0]!.endpoint, {
      url: 'https://hooks.example.com/b',
      enabled: true,
      failingSince: null,
      signatureKey: 'k-0123456789abcdef',
      previousKey: null,
      asymmetricSigning: false,
      signingPair: null,
      previousPair: null,
    });
    assert.equal([first[0]!.leaseUntil, typeof first[0]!.claimToken], [later(60_000), 'string']);
    assert.equal(JSON.parse(first[0]!.body), x1!.payload);
    assert.equal(await claim(now, later(60_000)), [], 'claimed ones are held');
    await run((r) => r.deliveryQueue.release([{ id: first[1]!.id, claimToken: randomUUID() }]));
    assert.equal(await claim(now, later(60_000)), [], "a release with another claim's token changes nothing");
    await run((r) => r.deliveryQueue.release([first[1]!]));
    const reclaimed = await claim(now, later(60_000));
    assert.equal(
      reclaimed.map((d) => d.eventId),
      [y1!.id],
      'a released claim is due again at once',
    );
    first = [first[0]!, reclaimed[0]!];

    // X1's lease runs out mid-send and another sender claims it over: the first sender's outcome is only logged.
    const over = await claim(later(60_001), later(120_000));
    assert.equal(
      over.map((d) => d.eventId),
      [x1!.id, y1!.id],
      'expired leases are claimed over',
    );
    await run((r) =>
      r.deliveryQueue.record([outcome(first[0]!, later(60_002), 200, { status: 'delivered' })], later(60_002), DAY),
    );
    assert.equal(await claim(later(60_003), later(120_000)), [], "a stale claim's success does not release X2");
    assert.is(await run((r) => r.deliveryLog.redeliver(over[0]!.id, later(60_004))), true);
    assert.equal(
      await claim(later(60_005), later(120_000)),
      [],
      'a delivery being sent is not redelivered under its sender',
    );

    const failedAt = later(60_010);
    await run((r) =>
      r.deliveryQueue.record(
        [
          outcome(over[0]!, failedAt, 500, { status: 'pending', nextAttemptAt: later(65_000) }),
          outcome(over[1]!, failedAt, 200, { status: 'delivered' }),
        ],
        failedAt,
        DAY,
      ),
    );
    assert.equal(await claim(later(60_100), later(120_000)), [], 'X2 waits while X1 waits for its retry');
    assert.is(await run((r) => r.deliveryLog.redeliver(over[0]!.id, later(60_200))), true);
    const early = await claim(later(60_200), later(120_000));
    assert.equal(
      early.map((d) => [d.eventId, d.attempts]),
      [[x1!.id, 1]],
      'redelivering one that waits for its retry sends it now',
    );
    await run((r) => r.deliveryQueue.release(early));
    const retried = await claim(later(65_000), later(125_000));
    assert.equal(
      retried.map((d) => [d.eventId, d.attempts]),
      [[x1!.id, 1]],
      'the stale outcome did not count as an attempt',
    );
    await run((r) =>
      r.deliveryQueue.record([outcome(retried[0]!, later(65_001), null, { status: 'failed' })], later(65_001), DAY),
    );
    const released = await claim(later(65_002), later(125_000));
    assert.equal(
      released.map((d) => d.eventId),
      [x2!.id],
      'a failed delivery releases the next of its order',
    );
    await run((r) =>
      r.deliveryQueue.record([outcome(released[0]!, later(65_003), 200, { status: 'delivered' })], later(65_003), DAY),
    );

    const log = await run((r) => r.deliveryLog.list({ accountId: brand.id, limit: 10 }));
    const x1Log = log.find((d) => d.eventId === x1!.id)!;
    assert.equal(
      [x1Log.status, x1Log.attempts.map((a) => a.statusCode), x1Log.nextAttemptAt, x1Log.url],
      ['failed', [200, 500, null], null, 'https://hooks.example.com/b'],
    );
    assert.equal(
      (await run((r) => r.deliveryLog.list({ accountId: brand.id, status: 'delivered', limit: 10 }))).map(
        (d) => d.eventId,
      ),
      [y1!.id, x2!.id],
    );
    assert.is(await run((r) => r.deliveryLog.redeliver(x1Log.id, later(66_000))), true);
    assert.is(await run((r) => r.deliveryLog.redeliver(randomUUID(), later(66_000))), false);
    const again = (await run((r) => r.deliveryLog.list({ accountId: brand.id, limit: 10 }))).find(
      (d) => d.id === x1Log.id,
    )!;
    assert.equal([again.status, again.attempts.length, again.nextAttemptAt], ['pending', 3, later(66_000)]);

    // Retention: finished deliveries of old events go with their events; a pending one and its event stay. The purge
    // takes whole days (a day is kept until it has ended past the horizon): two days on, as the worker's rounds run.
    let purged = 0;
    for (let round = 1000; round === 1000; purged += round)
      round = await run((r) => r.deliveryLog.purgeBefore(later(2 * 86_400_000), 1000));
    assert.ok(purged >= 2, 'the finished ones are purged');
    const left = mine(await run((r) => r.deliveryLog.list({ accountId: brand.id, limit: 10 })));
    assert.equal(
      left.map((d) => [d.eventId, d.status]),
      [
        [x3!.id, 'pending'],
        [x1!.id, 'pending'],
      ],
      'pending deliveries are kept',
    );
    // Leave nothing pending for the workers of later suites on a shared database.
    for (const step of [1, 2]) {
      const pending = await claim(later(66_000 + step), later(126_000));
      await run((r) =>
        r.deliveryQueue.record(
          pending.map((d) => outcome(d, later(66_000 + step), null, { status: 'failed' })),
          later(66_000 + step),
          DAY,
        ),
      );
    }
    assert.equal(mine(await run((r) => r.deliveryLog.list({ accountId: brand.id, status: 'pending', limit: 10 }))), []);
  });

  test.run();
}
