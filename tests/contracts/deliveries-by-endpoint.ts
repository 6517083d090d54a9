// An endpoint's own deliveries in the log, paged and redelivered: one part of the delivery contract (deliveries.ts).
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { OutboxEvent } from '../../domain/event.ts';
import { account, at, claimAll, DAY, type Run, webhookConfig } from './samples.ts';

/**
 * An endpoint's deliveries as the log gives them to it: paged with before, redelivered one by one (only by their
 * endpoint) or all failed since a time; held by the in-memory fake and the SQL adapters alike.
 */
export function deliveryByEndpointContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`delivery by endpoint contract: ${name}`);
  let run: Run;
  test.before(async () => {
    run = await setup();
  });

  test("deliveries: an endpoint's own, paged with before; redelivered one (only by its endpoint) or all failed since a time", async () => {
    const brand = account();
    const now = at('2026-06-01T00:00:00.000Z');
    const config = webhookConfig(brand.id, 'https://hooks.example.com/c', now);
    const event = (n: number) =>
      new OutboxEvent({
        id: randomUUID(),
        accountId: brand.id,
        scope: 'brand',
        type: 'OrderStatusEvent',
        orderId: 'P',
        payload: { _eid: `p${n}` },
        endpointId: config.id,
        deliver: true,
        createdAt: new Date(now.getTime() + n * 1000),
      });
    const events = [event(1), event(2), event(3)];
    await run(async (r) => {
      await r.accounts.save(brand);
      await r.webhookConfigs.save(config);
      await r.events.add(events);
    });
    const mine = <T extends { eventId: string }>(list: T[]) =>
      list.filter((d) => events.some((e) => e.id === d.eventId));
    const first = mine(await run((r) => r.deliveryLog.list({ endpointId: config.id, limit: 2 })));
    assert.equal(
      first.map((d) => d.eventId),
      [events[2]!.id, events[1]!.id],
      'newest first',
    );
    const rest = await run((r) =>
      r.deliveryLog.list({
        endpointId: config.id,
        limit: 10,
        before: { createdAt: first[1]!.createdAt, seq: first[1]!.seq },
      }),
    );
    assert.equal(
      rest.map((d) => d.eventId),
      [events[0]!.id],
    );

    // All three fail, one after the other (one order: one at a time).
    for (let i = 0; i < 3; i++) {
      const [claimed] = mine(
        await run((r) =>
          claimAll(r, 1000, new Date(now.getTime() + 10_000), new Date(now.getTime() + 70_000), randomUUID()),
        ),
      );
      await run((r) =>
        r.deliveryQueue.record(
          [
            {
              deliveryId: claimed!.id,
              endpointId: claimed!.endpointId,
              claimToken: claimed!.claimToken,
              createdAt: claimed!.createdAt,
              attempt: { at: now, statusCode: 500, durationMs: 1, error: 'HTTP 500' },
              exchange: null,
              state: { status: 'failed' },
            },
          ],
          now,
          DAY,
        ),
      );
    }
    assert.is(
      await run((r) => r.deliveryLog.redeliver(first[0]!.id, now, randomUUID())),
      false,
      'not by another endpoint',
    );
    const since = events[1]!.createdAt;
    assert.is(
      await run((r) =>
        r.deliveryLog.redeliverFailed({ endpointId: config.id }, since, new Date(now.getTime() + 20_000)),
      ),
      2,
    );
    assert.is(await run((r) => r.deliveryLog.redeliverFailed({ endpointId: randomUUID() }, since, now)), 0);
    assert.is(await run((r) => r.deliveryLog.redeliverFailed({ accountId: randomUUID() }, since, now)), 0);
    const log = mine(await run((r) => r.deliveryLog.list({ endpointId: config.id, limit: 10 })));
    assert.equal(
      log.map((d) => d.status),
      ['pending', 'pending', 'failed'],
    );
    const claimAt = new Date(now.getTime() + 20_000);
    const again = mine(
      await run((r) => claimAll(r, 1000, claimAt, new Date(claimAt.getTime() + 60_000), randomUUID())),
    );
    assert.equal(
      again.map((d) => [d.eventId, d.attempts]),
      [[events[1]!.id, 1]],
      'the earlier of the order first, its attempts continuing',
    );
    await run((r) =>
      r.deliveryQueue.record(
        [
          {
            deliveryId: again[0]!.id,
            endpointId: again[0]!.endpointId,
            claimToken: again[0]!.claimToken,
            createdAt: again[0]!.createdAt,
            attempt: { at: claimAt, statusCode: 200, durationMs: 1, error: null },
            exchange: null,
            state: { status: 'delivered' },
          },
        ],
        claimAt,
        DAY,
      ),
    );
    const next = mine(await run((r) => claimAll(r, 1000, claimAt, new Date(claimAt.getTime() + 60_000), randomUUID())));
    assert.equal(
      next.map((d) => d.eventId),
      [events[2]!.id],
    );
    await run((r) =>
      r.deliveryQueue.record(
        [
          {
            deliveryId: next[0]!.id,
            endpointId: next[0]!.endpointId,
            claimToken: next[0]!.claimToken,
            createdAt: next[0]!.createdAt,
            attempt: { at: claimAt, statusCode: 200, durationMs: 1, error: null },
            exchange: null,
            state: { status: 'delivered' },
          },
        ],
        claimAt,
        DAY,
      ),
    );
  });

  test.run();
}
