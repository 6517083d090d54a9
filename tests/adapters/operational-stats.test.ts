import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { operationalStats } from '../../adapters/persistence/operational-stats.ts';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { account, claimAll, DAY, numberedEvent, recordDelivered, webhookConfig } from '../contracts/samples.ts';
import { sharedDatabase } from '../support/shared.ts';

// What /metrics reads of the queues. The overdue gauge pages an operator (docs/monitoring/alerts.yml): it counts only
// a delivery that could be sent, and a disabled endpoint's deliveries wait as they are (CONTRACT §11), unsendable.
const test = suite("the queues' operational stats");

test("the oldest sendable delivery's age leaves out what a disabled endpoint has waiting", async () => {
  const { orm } = await sharedDatabase();
  const run = mikroOrmTransact(orm);
  const brand = account();
  // Decades old: counted, it would be the oldest by far (other suites leave pending deliveries of 2019 and later on a
  // shared database).
  const now = new Date('1990-03-01T00:00:00.000Z');
  const config = webhookConfig(brand.id, 'https://hooks.example.com/stats-paused', now);
  await run(async (r) => {
    await r.accounts.save(brand);
    await r.webhookConfigs.save(config);
    await r.events.add([numberedEvent(config, 0, now)]);
  });
  config.configure(config.url, false);
  await run((r) => r.webhookConfigs.save(config));
  const claim = (at: Date) => run((r) => claimAll(r, 10, at, new Date(at.getTime() + DAY), randomUUID()));
  // Puts the delivery in the queue, and hands out nothing of it.
  assert.equal(await claim(new Date(now.getTime() + 1000)), []);

  const { deliveries } = await operationalStats(orm).queues();
  assert.ok(deliveries.pending >= 1, 'it is pending');
  const itsAge = (Date.now() - now.getTime()) / 1000;
  assert.ok(
    deliveries.oldestPendingAgeSeconds < itsAge - 365 * 86_400,
    `${deliveries.oldestPendingAgeSeconds} s overdue`,
  );

  // Leave nothing pending for the workers of later suites on a shared database.
  config.configure(config.url, true);
  await run((r) => r.webhookConfigs.save(config));
  const left = await claim(new Date(now.getTime() + 2000));
  await run((r) => recordDelivered(r, left, new Date(now.getTime() + 2000)));
});

test.run();
