// Which deliveries a claim takes, and which outcome its record counts: one part of the delivery contract
// (deliveries.ts).
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { DeliveryResult } from '../../domain/delivery.ts';
import { OutboxEvent } from '../../domain/event.ts';
import { WebhookConfig } from '../../domain/webhook-config.ts';
import {
  account,
  at,
  claimAll,
  DAY,
  NO_HEALTH,
  numberedEvent,
  type Run,
  recordDelivered,
  savedOrderEvent,
  webhookConfig,
} from './samples.ts';

/**
 * What the sender's queue claims and records: one order's deliveries in the order written, at most a share of one
 * endpoint, the current claim's outcome over a lost one's; held by the in-memory fake and the SQL adapters alike.
 */
export function deliveryClaimContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`delivery claim contract: ${name}`);
  let run: Run;
  test.before(async () => {
    run = await setup();
  });

  test("deliveries: one order's events written in one unit go out in the order written (the feed's), one at a time", async () => {
    const brand = account();
    const now = at('2026-06-02T00:00:00.000Z');
    const config = webhookConfig(brand.id, 'https://hooks.example.com/o', now);
    const event = (orderId: string, n: number) =>
      new OutboxEvent({
        id: randomUUID(),
        accountId: brand.id,
        scope: 'brand',
        type: 'OrderStatusEvent',
        orderId,
        payload: { _eid: `o${n}`, n },
        endpointId: config.id,
        deliver: true,
        createdAt: now,
      });
    // Two orders interleaved in one batch, then more of the first in a later unit: their ids are random, their
    // order is the order they were written in.
    const batch = Array.from({ length: 16 }, (_, n) => event(n % 2 ? 'O2' : 'O1', n));
    const later = [16, 17].map((n) => event('O1', n));
    await run(async (r) => {
      await r.accounts.save(brand);
      await r.webhookConfigs.save(config);
      await r.events.add(batch);
    });
    await run((r) => r.events.add(later));
    const ours = [...batch, ...later];
    const received: number[] = [];
    for (let round = 0; round < 20; round++) {
      const claimed = (await run((r) => claimAll(r, 1000, now, new Date(now.getTime() + 60_000), randomUUID()))).filter(
        (d) => ours.some((e) => e.id === d.eventId),
      );
      if (claimed.length === 0) break;
      assert.ok(claimed.length <= 2, 'one delivery of each order at a time');
      received.push(...claimed.map((d) => JSON.parse(d.body).n as number));
      await run((r) => recordDelivered(r, claimed, now));
    }
    const orderOf = (n: number) => ours.find((e) => e.payload.n === n)!.orderId;
    assert.equal(
      received.filter((n) => orderOf(n) === 'O1'),
      [0, 2, 4, 6, 8, 10, 12, 14, 16, 17],
      'O1 in feed order',
    );
    assert.equal(
      received.filter((n) => orderOf(n) === 'O2'),
      [1, 3, 5, 7, 9, 11, 13, 15],
      'O2 in feed order',
    );
    assert.is(received.length, 18);
    const feed = await run((r) => r.eventFeed.page(config.id, 0, 100).then((p) => p.entries));
    assert.equal(
      feed.map((e) => JSON.parse(e.payload).n),
      ours.map((e) => e.payload.n),
      'the feed has them in the order written too',
    );
  });

  test('deliveries: a sender holds at most its share of one endpoint; a full endpoint is passed over, newer ones of others are claimed', async () => {
    const [busyBrand, quietBrand] = [account(), account()];
    const now = at('2026-06-03T00:00:00.000Z');
    const endpoint = (brandId: string, name: string, failingSince: Date | null) =>
      new WebhookConfig({
        id: randomUUID(),
        accountId: brandId,
        scope: 'brand',
        url: `https://hooks.example.com/${name}`,
        transformer: 'default',
        version: '1.3.0',
        signatureKey: null,
        enabled: true,
        ...NO_HEALTH,
        failingSince,
        createdAt: now,
        updatedAt: now,
      });
    const [busy, quiet] = [endpoint(busyBrand.id, 'busy', now), endpoint(quietBrand.id, 'quiet', null)];
    const event = (config: WebhookConfig, n: number) => numberedEvent(config, n, now);
    const busyEvents = Array.from({ length: 10 }, (_, n) => event(busy, n));
    const quietEvents = [event(quiet, 100), event(quiet, 101)];
    await run(async (r) => {
      for (const b of [busyBrand, quietBrand]) await r.accounts.save(b);
      for (const c of [busy, quiet]) await r.webhookConfigs.save(c);
      await r.events.add(busyEvents);
    });
    await run((r) => r.events.add(quietEvents));
    const ours = [...busyEvents, ...quietEvents];
    const claim = (held: Map<string, number>, limit = 100) =>
      run((r) =>
        r.deliveryQueue.claimDue({
          limit,
          now: new Date(now.getTime() + 1000),
          leaseUntil: new Date(now.getTime() + 60_000),
          claimToken: randomUUID(),
          perEndpoint: 3,
          held,
          lookForNew: true,
        }),
      ).then((claimed) => claimed.filter((d) => ours.some((e) => e.id === d.eventId)));
    const first = await claim(new Map([[busy.id, 1]]));
    assert.equal(
      first.map((d) => JSON.parse(d.body).n),
      [0, 1, 100, 101],
      "two more of the busy endpoint (it held one), then the other's",
    );
    assert.equal(
      first.map((d) => [d.endpointId, d.endpoint?.failingSince?.toISOString() ?? null]),
      [
        [busy.id, now.toISOString()],
        [busy.id, now.toISOString()],
        [quiet.id, null],
        [quiet.id, null],
      ],
      "each with its endpoint's failingSince as the claim read it (the sender holds a failing endpoint back by it)",
    );
    const none = await claim(new Map([[busy.id, 3]]));
    assert.equal(none, [], 'a full endpoint is passed over, whatever its backlog');
    const more = await claim(new Map());
    assert.equal(
      more.map((d) => JSON.parse(d.body).n),
      [2, 3, 4],
    );
    await run((r) => recordDelivered(r, [...first, ...more], now));
    // Leave nothing pending for the workers of later suites on a shared database.
    for (let round = 0; round < 5; round++) {
      const left = await claim(new Map());
      await run((r) => recordDelivered(r, left, now));
    }
  });

  test("deliveries: a record holding a lost claim's outcome beside the current one's counts the current one only", async () => {
    // A record put back after the database failed, then sent with the one made after the lease ran out and the
    // delivery was claimed and sent again: both outcomes of one delivery in one batch.
    const now = at('2026-06-04T00:00:00.000Z');
    const { config, event } = await savedOrderEvent(run, 'https://hooks.example.com/twice', 'twice', now);
    const claim = (from: number) =>
      run((r) =>
        claimAll(r, 1000, new Date(now.getTime() + from), new Date(now.getTime() + from + 60_000), randomUUID()),
      ).then((claimed) => claimed.filter((d) => d.eventId === event.id));
    const [lost] = await claim(0);
    const [current] = await claim(60_001);
    assert.ok(lost && current && lost.claimToken !== current.claimToken, 'claimed over after the lease');
    // Each claim's try starts once it holds its claim: the lost one at once, the current one after the lease.
    const outcome = (d: typeof lost, state: DeliveryResult['state'], from: number): DeliveryResult => ({
      deliveryId: d!.id,
      endpointId: d!.endpointId,
      claimToken: d!.claimToken,
      createdAt: d!.createdAt,
      attempt: { at: new Date(now.getTime() + from), statusCode: 500, durationMs: 1, error: 'x' },
      exchange: null,
      state,
    });
    await run((r) =>
      r.deliveryQueue.record(
        [
          outcome(current, { status: 'delivered' }, 60_001),
          outcome(lost, { status: 'pending', nextAttemptAt: new Date(now.getTime() + DAY) }, 0),
        ],
        now,
        DAY,
      ),
    );
    const [logged] = await run((r) => r.deliveryLog.list({ endpointId: config.id, limit: 1 }));
    assert.equal(
      [logged!.status, logged!.nextAttemptAt, logged!.attempts.length],
      ['delivered', null, 2],
      "the current claim's outcome, both attempts logged",
    );
    assert.equal(await claim(DAY + 1), [], 'and nothing left to send');
  });

  test.run();
}
