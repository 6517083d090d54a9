import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { account, claimAll, DAY, numberedEvent, recordDelivered, webhookConfig } from '../contracts/samples.ts';
import { sharedDatabase } from '../support/shared.ts';

// The queue's rows carry whether their endpoint is paused (disabled or without a URL; migration 20261201010000), so
// that the index of due rows never holds a paused backlog: flagged as they are queued, and as the endpoint changes,
// whichever way it changes (a PUT, an admin, a record that disables it for failing).
const test = suite("the delivery queue's paused rows");

test('rows are flagged as queued for a paused endpoint, and follow it as it is enabled or disabled', async () => {
  const { orm } = await sharedDatabase();
  const run = mikroOrmTransact(orm);
  const flags = async (endpointId: string) =>
    (
      await orm.em
        .fork()
        .getConnection()
        .execute<{ paused: boolean }[]>('select paused from delivery_queue where endpoint_id = ? order by position', [
          endpointId,
        ])
    ).map((r) => r.paused);
  const brand = account();
  const now = new Date('2020-04-01T00:00:00.000Z');
  const config = webhookConfig(brand.id, 'https://hooks.example.com/flags', now, 'brand', {
    enabled: false,
    disabledReason: 'integrator',
  });
  await run(async (r) => {
    await r.accounts.save(brand);
    await r.webhookConfigs.save(config);
    await r.events.add([numberedEvent(config, 0, now), numberedEvent(config, 1, now)]);
  });
  const claim = (at: Date) => run((r) => claimAll(r, 10, at, new Date(at.getTime() + DAY), randomUUID()));
  assert.equal(await claim(new Date(now.getTime() + 1000)), []);
  assert.equal(await flags(config.id), [true, true], 'queued for a disabled endpoint');

  const change = async (url: string | null, enabled: boolean) => {
    config.configure(url, enabled);
    await run((r) => r.webhookConfigs.save(config));
    return flags(config.id);
  };
  assert.equal(await change(config.url, true), [false, false], 'enabled');
  assert.equal(await change(null, true), [true, true], 'without a URL');
  assert.equal(await change('https://hooks.example.com/flags-again', true), [false, false], 'with one again');

  // Disabled for failing by the record of a failed delivery: its other delivery's row follows.
  const [first, second] = await claim(new Date(now.getTime() + 2000));
  assert.ok(first && second);
  await run((r) =>
    r.deliveryQueue.record(
      [
        {
          deliveryId: first.id,
          endpointId: first.endpointId,
          claimToken: first.claimToken,
          createdAt: first.createdAt,
          attempt: { at: new Date(now.getTime() + 3000), statusCode: 500, durationMs: 1, error: 'HTTP 500' },
          exchange: { request: { url: config.url!, headers: {} }, response: { headers: {}, body: '' } },
          state: { status: 'failed' },
        },
      ],
      new Date(now.getTime() + 3000),
      0,
    ),
  );
  const stored = await run((r) => r.webhookConfigs.find(brand.id, 'brand'));
  assert.equal([stored?.enabled, stored?.disabledReason], [false, 'failing']);
  assert.equal(await flags(config.id), [true], 'disabled for failing');

  // Leave nothing pending for the workers of later suites on a shared database.
  stored!.configure(stored!.url, true);
  await run((r) => r.webhookConfigs.save(stored!));
  const left = await claim(new Date(now.getTime() + 4 * DAY));
  await run((r) => recordDelivered(r, left, new Date(now.getTime() + 4 * DAY)));
});

test.run();
