import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Database } from '../../adapters/persistence/database/open.ts';
import { mikroOrmTransact } from '../../adapters/persistence/unit-of-work.ts';
import { account, claimAll, DAY, numberedEvent, recordDelivered, webhookConfig } from '../contracts/samples.ts';
import { sharedDatabase } from '../support/shared.ts';

// The queue's rows carry whether their endpoint is paused (disabled or without a URL; migration 20261201010000), so
// that the index of due rows never holds a paused backlog: flagged as they are queued, and as the endpoint changes,
// whichever way it changes (a PUT, an admin, a record that disables it for failing).
const test = suite("the delivery queue's paused rows");

/** The paused flags of an endpoint's queued rows, in feed order. */
const flags = async (orm: Database['orm'], endpointId: string) =>
  (
    await orm.em
      .fork()
      .getConnection()
      .execute<{ paused: boolean }[]>('select paused from delivery_queue where endpoint_id = ? order by position', [
        endpointId,
      ])
  ).map((r) => r.paused);

test('rows are flagged as queued for a paused endpoint, and follow it as it is enabled or disabled', async () => {
  const { orm } = await sharedDatabase();
  const run = mikroOrmTransact(orm);
  const flagsOf = (endpointId: string) => flags(orm, endpointId);
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
  assert.equal(await flagsOf(config.id), [true, true], 'queued for a disabled endpoint');

  const change = async (url: string | null, enabled: boolean) => {
    config.configure(url, enabled);
    await run((r) => r.webhookConfigs.save(config));
    return flagsOf(config.id);
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
  assert.equal(await flagsOf(config.id), [true], 'disabled for failing');

  // Leave nothing pending for the workers of later suites on a shared database.
  stored!.configure(stored!.url, true);
  await run((r) => r.webhookConfigs.save(stored!));
  const left = await claim(new Date(now.getTime() + 4 * DAY));
  await run((r) => recordDelivered(r, left, new Date(now.getTime() + 4 * DAY)));
});

test("a flag a race left wrong is set right by the queue's sweep, either way", async () => {
  const { orm } = await sharedDatabase();
  const run = mikroOrmTransact(orm);
  const sql = (text: string, values: unknown[]) => orm.em.fork().getConnection().execute(text, values);
  const [open, off] = [account(), account()];
  const now = new Date('2020-05-01T00:00:00.000Z');
  const enabled = webhookConfig(open.id, 'https://hooks.example.com/settle-open', now);
  const disabled = webhookConfig(off.id, 'https://hooks.example.com/settle-off', now, 'brand', {
    enabled: false,
    disabledReason: 'integrator',
  });
  await run(async (r) => {
    for (const a of [open, off]) await r.accounts.save(a);
    for (const c of [enabled, disabled]) await r.webhookConfigs.save(c);
    await r.events.add([numberedEvent(enabled, 0, now), numberedEvent(disabled, 1, now)]);
  });
  const at = new Date(now.getTime() + 1000);
  const claim = () => run((r) => claimAll(r, 10, at, new Date(at.getTime() + DAY), randomUUID()));
  assert.equal(
    (await claim()).map((d) => d.endpointId),
    [enabled.id],
  );
  // As a resume that missed a row queued meanwhile, and a pause that passed over one, would leave them.
  await sql(
    'update delivery_queue set paused = (endpoint_id = ?), lease_until = null, claim_token = null ' +
      'where endpoint_id in (?, ?)',
    [enabled.id, enabled.id, disabled.id],
  );
  assert.equal(await claim(), [], 'neither handed out');
  assert.ok((await run((r) => r.deliveryQueue.settle())) >= 2, 'both set right');
  assert.equal(await flags(orm, enabled.id), [false]);
  assert.equal(await flags(orm, disabled.id), [true]);
  const claimed = await claim();
  assert.equal(
    claimed.map((d) => d.endpointId),
    [enabled.id],
    "the enabled endpoint's row is handed out again",
  );
  // Leave nothing pending for the workers of later suites on a shared database.
  await run((r) => recordDelivered(r, claimed, at));
  disabled.configure(disabled.url, true);
  await run((r) => r.webhookConfigs.save(disabled));
  await run(async (r) => recordDelivered(r, await claimAll(r, 10, at, new Date(at.getTime() + DAY), randomUUID()), at));
});

test.run();
