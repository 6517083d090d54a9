import { suite } from 'uvu';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { assertFirstReceiptsInFeedOrder, updateCustomerInRuns, wholeFeed } from '../support/order-runs.ts';
import { startReceiver } from '../support/receiver.ts';

// CONTRACT §7 on the app as served, on either database: one order's webhooks reach the receiver, first receipts, in the
// order of the feed, though the executor's batches write several of its events in one transaction.
const test = suite("one order's webhooks in feed order, batch after batch");
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;
test.before(async () => {
  app = await appWithMailbox();
  app.worker.start();
});
test.after(() => app.worker.stop());

test("40 UpdateCustomer commands on one order, 8 at a time: the receiver's first receipts follow the feed", async () => {
  const receiver = await startReceiver();
  const brand = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: receiver.url(),
    transformer: 'default',
    version: '1.3.0',
  });
  const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', {
    brandAccountId: brand.accountId,
    status: 'accepted',
  });
  const auth = `Bearer ${brand.accessToken}`;
  await updateCustomerInRuns(
    async (body) => (await app.http.post('/v3/commands').set('authorization', auth).send(body)).status,
    apiId,
  );
  const ofOrder = (r: { payload: Record<string, unknown> }) =>
    r.payload._type === 'OrderStatusEvent' && r.payload.orderId === apiId;
  await receiver.until(
    (got) => new Set(got.filter(ofOrder).map((r) => r.payload._eid)).size >= 41,
    60_000,
    "the order's 41 events",
  );
  const feed = await wholeFeed(async (path) => (await app.http.get(path).set('authorization', auth)).body);
  assertFirstReceiptsInFeedOrder(receiver.received, feed, apiId);
});

test.run();
