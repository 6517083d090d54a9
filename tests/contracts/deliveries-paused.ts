// What is kept of the deliveries of an endpoint disabled or without a URL: one part of the delivery contract
// (deliveries.ts).
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { account, at, DAY, numberedEvent, type Run, recordDelivered, webhookConfig } from './samples.ts';

/**
 * CONTRACT §11: an endpoint disabled, by its integrator or for failing, keeps its pending deliveries as they are, and
 * they go on once it is enabled again; its events and deliveries are still retained only EVENT_RETENTION_DAYS (§10).
 * Held by the in-memory fake and the SQL adapters alike.
 */
export function deliveryPausedContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`paused endpoint delivery contract: ${name}`);
  let run: Run;
  test.before(async () => {
    run = await setup();
  });
  const claimAt = (claimedAt: Date) =>
    run((r) =>
      r.deliveryQueue.claimDue({
        limit: 4,
        now: claimedAt,
        leaseUntil: new Date(claimedAt.getTime() + 60_000),
        claimToken: randomUUID(),
        perEndpoint: 3,
        held: new Map(),
        lookForNew: true,
      }),
    );

  test('deliveries: an endpoint disabled or without a URL keeps its pending ones unclaimed till enabled', async () => {
    const [pausedBrand, bareBrand, quietBrand] = [account(), account(), account()];
    // As above: older than any other suite's deliveries, so that these claims see only these.
    const now = at('2020-02-01T00:00:00.000Z');
    const [paused, bare, quiet] = [
      webhookConfig(pausedBrand.id, 'https://hooks.example.com/paused', now),
      webhookConfig(bareBrand.id, 'https://hooks.example.com/bare', now),
      webhookConfig(quietBrand.id, 'https://hooks.example.com/quiet', now),
    ];
    // The paused endpoint's deliveries are the oldest, and more than the claim looks at first.
    await run(async (r) => {
      for (const b of [pausedBrand, bareBrand, quietBrand]) await r.accounts.save(b);
      for (const c of [paused, bare, quiet]) await r.webhookConfigs.save(c);
      await r.events.add(Array.from({ length: 40 }, (_, n) => numberedEvent(paused, n, now)));
      await r.events.add([numberedEvent(bare, 50, now), numberedEvent(quiet, 100, now)]);
    });
    paused.configure(paused.url, false);
    bare.configure(null, true);
    await run(async (r) => {
      for (const c of [paused, bare]) await r.webhookConfigs.save(c);
    });
    const claimedAt = new Date(now.getTime() + 1000);
    const claim = () => claimAt(claimedAt);
    const first = await claim();
    assert.equal(
      first.map((d) => JSON.parse(d.body).n),
      [100],
      'the enabled endpoint with a URL only',
    );
    await run((r) => recordDelivered(r, first, claimedAt));
    assert.equal(await claim(), [], 'the others wait');
    paused.configure(paused.url, true);
    bare.configure('https://hooks.example.com/bare-again', true);
    await run(async (r) => {
      for (const c of [paused, bare]) await r.webhookConfigs.save(c);
    });
    const again = await claim();
    assert.equal(
      again.map((d) => JSON.parse(d.body).n),
      [0, 1, 2, 50],
      'enabled again, as they were',
    );
    // Leave nothing pending for the workers of later suites on a shared database.
    for (let claimed = again; claimed.length > 0; claimed = await claim()) {
      await run((r) => recordDelivered(r, claimed, claimedAt));
    }
  });

  test('deliveries: what a disabled endpoint has waiting goes past the retention, as finished ones do', async () => {
    const brand = account();
    const now = at('2020-03-01T00:00:00.000Z');
    const config = webhookConfig(brand.id, 'https://hooks.example.com/paused-past-retention', now);
    await run(async (r) => {
      await r.accounts.save(brand);
      await r.webhookConfigs.save(config);
      await r.events.add([numberedEvent(config, 0, now), numberedEvent(config, 1, now)]);
    });
    config.configure(config.url, false);
    await run((r) => r.webhookConfigs.save(config));
    assert.equal(await claimAt(new Date(now.getTime() + 1000)), [], 'queued, and waiting');
    // The purge takes whole days (a day is kept until it has ended past the horizon): two days on.
    for (let round = 1000; round === 1000; )
      round = await run((r) => r.deliveryLog.purgeBefore(new Date(now.getTime() + 2 * DAY), 1000));
    assert.equal(await run((r) => r.deliveryLog.list({ accountId: brand.id, limit: 10 })), [], 'purged');
    config.configure(config.url, true);
    await run((r) => r.webhookConfigs.save(config));
    const mine = (await claimAt(new Date(now.getTime() + 3 * DAY))).filter((d) => d.endpointId === config.id);
    assert.equal(mine, [], 'nothing left to send once enabled');
  });

  test.run();
}
