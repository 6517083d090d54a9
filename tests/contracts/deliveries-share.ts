// What one claim hands out when one endpoint has far more waiting than the others: one part of the delivery contract
// (deliveries.ts).
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { WebhookConfig } from '../../domain/webhook-config.ts';
import { account, at, numberedEvent, type Run, recordDelivered, webhookConfig } from './samples.ts';

/**
 * CONTRACT §7, "no endpoint slows another": a claim gives every endpoint its share, whatever one of them has waiting
 * before the others' (the SQL claim looked at a few claims' worth of the oldest deliveries only); held by the
 * in-memory fake and the SQL adapters alike.
 */
export function deliveryShareContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`delivery share contract: ${name}`);
  let run: Run;
  test.before(async () => {
    run = await setup();
  });

  test("deliveries: one endpoint's backlog, however long, leaves the others their share of a claim", async () => {
    const [loudBrand, quietBrand] = [account(), account()];
    // Older than any other suite's deliveries, and claimed at a time before theirs: this claim sees only these.
    const now = at('2020-01-01T00:00:00.000Z');
    const [loud, quiet] = [
      webhookConfig(loudBrand.id, 'https://hooks.example.com/loud', now),
      webhookConfig(quietBrand.id, 'https://hooks.example.com/quiet', now),
    ];
    const event = (config: WebhookConfig, n: number) => numberedEvent(config, n, now);
    // Far more than the few claims' worth of oldest deliveries a claim looks at first.
    const loudEvents = Array.from({ length: 40 }, (_, n) => event(loud, n));
    const quietEvents = [event(quiet, 100), event(quiet, 101)];
    await run(async (r) => {
      for (const b of [loudBrand, quietBrand]) await r.accounts.save(b);
      for (const c of [loud, quiet]) await r.webhookConfigs.save(c);
      await r.events.add(loudEvents);
    });
    await run((r) => r.events.add(quietEvents));
    const claimedAt = new Date(now.getTime() + 1000);
    const claim = () =>
      run((r) =>
        r.deliveryQueue.claimDue({
          limit: 4,
          now: claimedAt,
          leaseUntil: new Date(now.getTime() + 60_000),
          claimToken: randomUUID(),
          perEndpoint: 3,
          held: new Map(),
          lookForNew: true,
        }),
      );
    const first = await claim();
    assert.equal(
      first.map((d) => JSON.parse(d.body).n),
      [0, 1, 2, 100],
      "the loud endpoint's share, then the quiet one's oldest: not the loud one's alone",
    );
    // Leave nothing pending for the workers of later suites on a shared database.
    for (let claimed = first; claimed.length > 0; claimed = await claim()) {
      await run((r) => recordDelivered(r, claimed, claimedAt));
    }
  });

  test.run();
}
