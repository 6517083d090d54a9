import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ClaimedDelivery, DeliveryResult } from '../../domain/delivery.ts';
import { endpointHealthSamples } from './endpoint-health-samples.ts';
import { DAY, type Run } from './samples.ts';

/**
 * What the record of attempts does to its endpoints (CONTRACT §11), held by the fake (which runs judgeEndpoint) and the
 * SQL (which mirrors it); what it keeps beside and of each attempt: endpoint-health-records.ts.
 */
export function endpointHealthContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`endpoint health contract: ${name}`);
  let run: Run;
  test.before(async () => {
    run = await setup();
  });
  const { later, endpointWithClaims, result, health } = endpointHealthSamples(() => run);

  test('failing from the first failure after the last 2xx; a delivery ending failed warns once while it fails, then disables', async () => {
    const {
      brand,
      config,
      claimed: [d1, d2, d3, d4, d5],
    } = await endpointWithClaims(5);
    const url = config.url!;
    // One batch: a failure, a 2xx after it, then a failure that ends its delivery: failing since the last failure.
    const notices = await run((r) =>
      r.deliveryQueue.record(
        [
          result(d1!, url, 1000, 500, { status: 'pending', nextAttemptAt: later(DAY * 10) }),
          result(d2!, url, 2000, 200, { status: 'delivered' }),
          result(d3!, url, 3000, null, { status: 'failed' }),
        ],
        later(4000),
        5 * DAY,
      ),
    );
    assert.equal(notices, [
      {
        kind: 'failing',
        endpointId: config.id,
        accountId: brand.id,
        url,
        failingSince: later(3000),
        failedDeliveries: 1,
      },
    ]);
    assert.equal(await health(brand.id), {
      failingSince: later(3000),
      enabled: true,
      disabledReason: null,
      failureMailedAt: later(4000),
    });

    // Another failed delivery two days on: still failing since then, and warned of it already: no notice.
    assert.equal(
      await run((r) =>
        r.deliveryQueue.record([result(d4!, url, 2 * DAY, 500, { status: 'failed' })], later(2 * DAY), 5 * DAY),
      ),
      [],
    );
    // Five days after it began failing, the next delivery to end failed disables it.
    const disabled = await run((r) =>
      r.deliveryQueue.record(
        [result(d5!, url, 5 * DAY + 3000, 500, { status: 'failed' })],
        later(5 * DAY + 3000),
        5 * DAY,
      ),
    );
    assert.equal(disabled, [
      {
        kind: 'disabled',
        endpointId: config.id,
        accountId: brand.id,
        url,
        failingSince: later(3000),
        failedDeliveries: 3,
      },
    ]);
    assert.equal(await health(brand.id), {
      failingSince: later(3000),
      enabled: false,
      disabledReason: 'failing',
      failureMailedAt: later(5 * DAY + 3000),
    });
  });

  test('a failing period warns once: one that starts again within the day of the last mail sends none; one after it does', async () => {
    const {
      brand,
      config,
      claimed: [d1, d2, d3, d4, d5],
    } = await endpointWithClaims(5);
    const url = config.url!;
    const fail = (d: ClaimedDelivery, atMs: number) =>
      run((r) => r.deliveryQueue.record([result(d, url, atMs, 500, { status: 'failed' })], later(atMs), 5 * DAY));
    assert.equal(
      (await fail(d1!, 1000)).map((n) => n.kind),
      ['failing'],
    );
    await run((r) =>
      r.deliveryQueue.record([result(d2!, url, 2000, 200, { status: 'delivered' })], later(2000), 5 * DAY),
    );
    assert.equal(await fail(d3!, 3000), [], 'failing again within the day of the mail');
    assert.equal((await health(brand.id)).failingSince, later(3000));
    await run((r) =>
      r.deliveryQueue.record([result(d4!, url, DAY + 4000, 200, { status: 'delivered' })], later(DAY + 4000), 5 * DAY),
    );
    const again = await fail(d5!, DAY + 5000);
    assert.equal(
      again.map((n) => [n.kind, n.failingSince]),
      [['failing', later(DAY + 5000)]],
      'a new period a day after the mail',
    );
    assert.equal((await health(brand.id)).failureMailedAt, later(DAY + 5000));
  });

  test('a new failing period is mailed about only a full day after the last mail: not 12 h, nor a second short of a day, on', async () => {
    const {
      brand,
      config,
      claimed: [d1, d2, d3, d4, d5, d6, d7],
    } = await endpointWithClaims(7);
    const url = config.url!;
    const record = (d: ClaimedDelivery, atMs: number, statusCode: number, state: DeliveryResult['state']) =>
      run((r) => r.deliveryQueue.record([result(d, url, atMs, statusCode, state)], later(atMs), 5 * DAY));
    const fail = async (d: ClaimedDelivery, atMs: number) =>
      (await record(d, atMs, 500, { status: 'failed' })).map((n) => n.kind);
    const ok = (d: ClaimedDelivery, atMs: number) => record(d, atMs, 200, { status: 'delivered' });
    assert.equal(await fail(d1!, 1000), ['failing'], 'the first mail');
    // Each period ends with a 2xx, so that the next failure starts a new one: only the day since the mail holds it
    // back.
    await ok(d2!, 2000);
    assert.equal(await fail(d3!, DAY / 2 + 1000), [], '12 h after the mail');
    await ok(d4!, DAY / 2 + 2000);
    assert.equal(await fail(d5!, DAY), [], 'a second short of a day after the mail');
    assert.equal(await health(brand.id), {
      failingSince: later(DAY),
      enabled: true,
      disabledReason: null,
      failureMailedAt: later(1000),
    });
    await ok(d6!, DAY + 500);
    assert.equal(await fail(d7!, DAY + 1000), ['failing'], 'a day after the mail');
    assert.equal((await health(brand.id)).failureMailedAt, later(DAY + 1000));
  });

  test('a 2xx clears failingSince; a pending retry neither warns nor disables; an attempt never sent says nothing of health', async () => {
    const {
      brand,
      config,
      claimed: [d1, d2, d3],
    } = await endpointWithClaims(3);
    const url = config.url!;
    assert.equal(
      await run((r) =>
        r.deliveryQueue.record(
          [result(d1!, url, 1000, 503, { status: 'pending', nextAttemptAt: later(DAY * 10) })],
          later(1000),
          0,
        ),
      ),
      [],
    );
    assert.equal((await health(brand.id)).failingSince, later(1000));
    const unsent: DeliveryResult = { ...result(d2!, url, 2000, null, { status: 'failed' }), exchange: null };
    await run((r) =>
      r.deliveryQueue.record([unsent, result(d3!, url, 2500, 204, { status: 'delivered' })], later(3000), 0),
    );
    assert.equal(await health(brand.id), {
      failingSince: null,
      enabled: true,
      disabledReason: null,
      failureMailedAt: null,
    });
  });

  test('a batch recorded after a later failure: its older 2xx does not end the failing, its failures after the 2xx count', async () => {
    const {
      brand,
      config,
      claimed: [d1, d2, d3, d4],
    } = await endpointWithClaims(4);
    const url = config.url!;
    const pending = { status: 'pending', nextAttemptAt: later(DAY * 10) } as const;
    await run((r) => r.deliveryQueue.record([result(d1!, url, 5000, 500, pending)], later(5000), 5 * DAY));
    await run((r) =>
      r.deliveryQueue.record([result(d2!, url, 3000, 200, { status: 'delivered' })], later(6000), 5 * DAY),
    );
    assert.equal((await health(brand.id)).failingSince, later(5000), 'the 2xx came before the failure');
    await run((r) =>
      r.deliveryQueue.record(
        [result(d3!, url, 2000, 200, { status: 'delivered' }), result(d4!, url, 4000, 500, pending)],
        later(7000),
        5 * DAY,
      ),
    );
    assert.equal(
      (await health(brand.id)).failingSince,
      later(4000),
      "a failure after the batch's 2xx and before the stored one",
    );
  });

  test('tries sent to the URL the endpoint had before say nothing of the one it has now', async () => {
    const {
      brand,
      claimed: [d1, d2],
    } = await endpointWithClaims(2);
    const old = 'https://hooks.example.com/the-url-before';
    const notices = await run((r) =>
      r.deliveryQueue.record(
        [
          result(d1!, old, 1000, 500, { status: 'failed' }),
          result(d2!, old, 2000, null, { status: 'pending', nextAttemptAt: later(DAY) }),
        ],
        later(6 * DAY),
        5 * DAY,
      ),
    );
    assert.equal(notices, []);
    assert.equal(await health(brand.id), {
      failingSince: null,
      enabled: true,
      disabledReason: null,
      failureMailedAt: null,
    });
  });

  test.run();
}
