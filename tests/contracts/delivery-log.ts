import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WebhookConfig } from '../../domain/webhook-config.ts';
import { account, at, claimAll, DAY, NO_HEALTH, orderEvent, type Run, saveWithEvents } from './samples.ts';

/** What the delivery log answers of an endpoint's attempts, held by the in-memory fake and the SQL adapter alike. */
export function deliveryLogContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`delivery log contract: ${name}`);
  let run: Run;
  test.before(async () => {
    run = await setup();
  });

  test('stats: attempts per UTC hour, 2xx against the others, percentiles of their durations; every bucket of the span', async () => {
    const brand = account();
    const t0 = at('2026-08-01T10:00:00.000Z');
    const config = new WebhookConfig({
      id: randomUUID(),
      accountId: brand.id,
      scope: 'brand',
      url: 'https://hooks.example.com/stats',
      transformer: 'default',
      version: '1.3.0',
      signatureKey: null,
      enabled: true,
      ...NO_HEALTH,
      createdAt: t0,
      updatedAt: t0,
    });
    const events = [1, 2, 3, 4, 5].map((n) => orderEvent(config, `stats-${n}`, t0, { _eid: `s${n}` }));
    await saveWithEvents(run, brand, config, events);
    const claimed = (await run((r) => claimAll(r, 1000, t0, new Date(t0.getTime() + DAY), randomUUID()))).filter((d) =>
      events.some((e) => e.id === d.eventId),
    );
    // 10:05 200 in 10 ms, 10:10 500 in 30 ms, 10:59 no answer in 20 ms; 12:00 200 in 40 ms (11:00 has none); and at
    // 10:30 an attempt that sent nothing (the endpoint disabled): not the endpoint's.
    const tries: [number, number | null, number, boolean][] = [
      [5, 200, 10, true],
      [10, 500, 30, true],
      [59, null, 20, true],
      [120, 200, 40, true],
      [30, null, 0, false],
    ];
    const exchange = { request: { url: config.url!, headers: {} }, response: null };
    await run((r) =>
      r.deliveryQueue.record(
        claimed.map((d, i) => ({
          deliveryId: d.id,
          endpointId: d.endpointId,
          claimToken: d.claimToken,
          createdAt: d.createdAt,
          exchange: tries[i]![3] ? exchange : null,
          state: { status: 'delivered' as const },
          attempt: {
            at: new Date(t0.getTime() + tries[i]![0] * 60_000),
            statusCode: tries[i]![1],
            durationMs: tries[i]![2],
            error: null,
          },
        })),
        t0,
        DAY,
      ),
    );
    const hours = await run((r) =>
      r.deliveryLog.stats(
        config.id,
        new Date(t0.getTime() + 30 * 60_000),
        new Date(t0.getTime() + 150 * 60_000),
        'hour',
      ),
    );
    assert.equal(hours, [
      { start: t0, attempts: 3, succeeded: 1, failed: 2, p50Ms: 20, p99Ms: 30 },
      { start: new Date(t0.getTime() + 3_600_000), attempts: 0, succeeded: 0, failed: 0, p50Ms: null, p99Ms: null },
      { start: new Date(t0.getTime() + 7_200_000), attempts: 1, succeeded: 1, failed: 0, p50Ms: 40, p99Ms: 40 },
    ]);
    const days = await run((r) => r.deliveryLog.stats(config.id, t0, t0, 'day'));
    assert.equal(days, [
      { start: at('2026-08-01T00:00:00.000Z'), attempts: 4, succeeded: 2, failed: 2, p50Ms: 20, p99Ms: 40 },
    ]);
    assert.equal(
      (await run((r) => r.deliveryLog.stats(randomUUID(), t0, t0, 'hour'))).map((b) => b.attempts),
      [0],
      'another endpoint: none',
    );
  });

  test.run();
}
