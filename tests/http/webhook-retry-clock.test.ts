import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox } from '../support/integrators.ts';
import { startReceiver } from '../support/receiver.ts';

// The durable retries wait on the service's clock: the test clock moves an hour-long wait forward at once.
const test = suite('webhook retries on the test clock');

test('a retry an hour away goes out once the test clock has moved an hour, not before', async () => {
  const app = await appWithMailbox({ TEST_CLOCK: '1', WEBHOOK_RETRY_SCHEDULE: '1h', WEBHOOK_TIMEOUT_MS: '2000' });
  app.worker.start();
  try {
    const receiver = await startReceiver(({ n }) => (n === 1 ? 500 : 200));
    const brandId = (await app.admin.call<{ id: string }>('accounts.create', { name: `brand ${randomUUID().slice(0, 6)}`, role: 'brand' })).id;
    await app.admin.call('webhookConfigs.upsert', { accountId: brandId, scope: 'brand', url: receiver.url(), transformer: 'default', version: '1.3.0' });
    await app.admin.call('jobs.create', { brandAccountId: brandId, status: 'accepted' });
    await receiver.until((r) => r.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const [delivery] = (await app.admin.query<{ items: { status: string; attempts: unknown[]; nextAttemptAt: string }[] }>('deliveries.list', { accountId: brandId })).items;
    assert.equal([delivery!.status, receiver.received.filter((r) => r.answered === 200).length], ['pending', 0], 'the retry waits for its hour');
    assert.ok(delivery!.attempts.length >= 1);

    await app.admin.call('testClock.advance', { seconds: 3600 });
    const answered = await receiver.until((r) => r.some((x) => x.answered === 200), 5000, 'the retry after the hour');
    assert.ok(answered.some((x) => x.answered === 200));
  } finally {
    await app.worker.stop();
  }
});

test.run();
