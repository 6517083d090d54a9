// What a record of attempts keeps beside a key rotation, and of each attempt: one part of the endpoint health
// contract (endpoint-health.ts).
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { endpointHealthSamples } from './endpoint-health-samples.ts';
import { DAY, type Run } from './samples.ts';

/**
 * What a record of attempts keeps, held by the fake and the SQL alike: the health it judged, which a key rotation read
 * before it does not undo, and each attempt's request and answer.
 */
export function endpointHealthRecordContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`endpoint health record contract: ${name}`);
  let run: Run;
  test.before(async () => {
    run = await setup();
  });
  const { later, endpointWithClaims, exchange, result, health } = endpointHealthSamples(() => run);

  test('a rotation read before a disable writes only its keys: the endpoint stays disabled', async () => {
    const OLD = 'the-old-signing-key-0123456789';
    const NEW = 'the-new-signing-key-0123456789';
    const {
      brand,
      config,
      claimed: [d1],
    } = await endpointWithClaims(1, OLD);
    const read = (await run((r) => r.webhookConfigs.find(brand.id, 'brand')))!;
    const disabled = await run((r) =>
      r.deliveryQueue.record(
        [result(d1!, config.url!, 1000, 500, { status: 'failed' })],
        later(5 * DAY + 1000),
        5 * DAY,
      ),
    );
    assert.equal(
      disabled.map((n) => n.kind),
      ['disabled'],
    );
    read.rotateKey(NEW, 60, later(5 * DAY + 2000));
    read.updatedAt = later(5 * DAY + 2000);
    await run((r) => r.webhookConfigs.saveKeys(read));
    assert.equal(await health(brand.id), {
      failingSince: later(1000),
      enabled: false,
      disabledReason: 'failing',
      failureMailedAt: later(5 * DAY + 1000),
    });
    const stored = (await run((r) => r.webhookConfigs.find(brand.id, 'brand')))!;
    assert.equal(
      [stored.signatureKey, stored.previousKey, stored.updatedAt],
      [NEW, { value: OLD, expiresAt: later(5 * DAY + 62_000) }, later(5 * DAY + 2000)],
    );
  });

  test('each attempt keeps its request and answer, read back by get (of its endpoint only) and never listed', async () => {
    const {
      brand,
      config,
      claimed: [d1],
    } = await endpointWithClaims(1);
    const url = config.url!;
    await run((r) =>
      r.deliveryQueue.record(
        [{ ...result(d1!, url, 1000, null, { status: 'pending', nextAttemptAt: later(DAY * 10) }) }],
        later(1000),
        DAY,
      ),
    );
    const detail = await run((r) => r.deliveryLog.get(d1!.id, config.id));
    assert.ok(detail);
    assert.equal([detail.payload, detail.endpointId, detail.status], [d1!.body, config.id, 'pending']);
    assert.equal(
      detail.attempts.map((a) => [a.statusCode, a.request, a.response]),
      [[null, exchange(url, null).request, null]],
    );
    assert.is(await run((r) => r.deliveryLog.get(d1!.id, randomUUID())), null, "another endpoint's");
    assert.is(await run((r) => r.deliveryLog.get('not-an-id')), null);
    const [listed] = await run((r) => r.deliveryLog.list({ accountId: brand.id, limit: 5 }));
    assert.equal(Object.keys(listed!.attempts[0]!).sort(), ['at', 'durationMs', 'error', 'statusCode']);
  });

  test('a record made again after its answer was lost logs each attempt once and judges nothing twice', async () => {
    const {
      brand,
      config,
      claimed: [d1, d2],
    } = await endpointWithClaims(2);
    const failed = [result(d1!, config.url!, 1000, 500, { status: 'pending', nextAttemptAt: later(DAY) })];
    await run((r) => r.deliveryQueue.record(failed, later(1000), DAY));
    await run((r) =>
      r.deliveryQueue.record([result(d2!, config.url!, 2000, 200, { status: 'delivered' })], later(2000), DAY),
    );
    assert.is((await health(brand.id)).failingSince, null, 'healed by the 2xx after the failure');
    // The first record's answer was lost: it is made again, after the 2xx.
    await run((r) => r.deliveryQueue.record(failed, later(3000), DAY));
    const detail = (await run((r) => r.deliveryLog.get(d1!.id, config.id)))!;
    assert.equal([detail.attempts.length, detail.status], [1, 'pending']);
    assert.is((await health(brand.id)).failingSince, null, 'the failure is not judged again');
  });

  test('a failure recorded after a later 2xx of the same endpoint (recorded first) leaves it healthy', async () => {
    const {
      brand,
      config,
      claimed: [d1, d2],
    } = await endpointWithClaims(2);
    // d1's attempt started first and timed out; d2's started later, answered 2xx at once, and was recorded first.
    await run((r) =>
      r.deliveryQueue.record([result(d2!, config.url!, 2000, 200, { status: 'delivered' })], later(2100), DAY),
    );
    const failed = result(d1!, config.url!, 1000, null, { status: 'pending', nextAttemptAt: later(DAY) });
    await run((r) => r.deliveryQueue.record([failed], later(11_000), DAY));
    assert.is((await health(brand.id)).failingSince, null, 'no attempt without a 2xx after the last 2xx');
  });

  test.run();
}
