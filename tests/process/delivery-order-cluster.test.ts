import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertFirstReceiptsInFeedOrder, updateCustomerInRuns, wholeFeed } from '../support/order-runs.ts';
import { integratorLoggedIn, processClient, type ServiceProcess, startService } from '../support/process.ts';
import { startReceiver } from '../support/receiver.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// The reproduction on a cluster start (WEB_CONCURRENCY=2: two API processes and the worker on one PostgreSQL):
// one order's webhooks reach the receiver, first receipts, in feed order (CONTRACT §7).
const test = suite("one order's webhooks in feed order on a cluster start");
const ADMIN = 'order-cluster-admin-token-0123456789';
const database = `pbi_order_cluster_${process.pid}_${Date.now()}`;
const urlOf = (name: string) => {
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
};
const dataDir = mkdtempSync(join(tmpdir(), 'pbi-order-cluster-'));
let service: ServiceProcess | undefined;

async function onServer(text: string) {
  const client = new pg.Client({ connectionString: urlOf('postgres') });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

test.after(async () => {
  await service?.stop('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
  if (onPostgres) await onServer(`drop database if exists ${database} with (force)`);
});

test('40 UpdateCustomer commands on one order, 8 at a time, through two API processes: first receipts follow the feed', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  await onServer(`create database ${database}`);
  service = startService({
    DATABASE_URL: urlOf(database),
    WEB_CONCURRENCY: '2',
    DATABASE_POOL_SIZE: '5',
    ADMIN_TOKEN: ADMIN,
    DATA_DIR: dataDir,
    JWT_SECRET: 'order-cluster-secret-0123456789-0123456789',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
  });
  const port = await service.listening;
  const client = processClient(port, ADMIN);
  const receiver = await startReceiver();
  const brand = await integratorLoggedIn(client, dataDir, 'brand', 'orders@order-cluster.example');
  await client.admin('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: receiver.url(),
    transformer: 'default',
    version: '1.3.0',
  });
  const { apiId } = await client.admin<{ apiId: string }>('jobs.create', {
    brandAccountId: brand.accountId,
    status: 'accepted',
  });
  await updateCustomerInRuns(
    async (body) =>
      (await client.rest('/v3/commands', { method: 'POST', body: JSON.stringify(body), token: brand.token })).status,
    apiId,
  );
  const ofOrder = (r: { payload: Record<string, unknown> }) =>
    r.payload._type === 'OrderStatusEvent' && r.payload.orderId === apiId;
  await receiver
    .until((got) => new Set(got.filter(ofOrder).map((r) => r.payload._eid)).size >= 41, 60_000, "the order's 41 events")
    .catch((error: Error) => {
      throw new Error(`${error.message}\n${service!.output().slice(-2000)}`);
    });
  const feed = await wholeFeed(
    async (path) =>
      (await client.rest(path, { token: brand.token })).json() as Promise<{
        items: Record<string, unknown>[];
        next: string | null;
      }>,
  );
  assertFirstReceiptsInFeedOrder(receiver.received, feed, apiId);
  const poll = (await (await client.rest(`/v3/poll/job/*/${apiId}`, { token: brand.token })).json()) as {
    customer: { firstName: string };
  };
  const last = receiver.received.filter(ofOrder).at(-1)!.payload.customer as { firstName: string };
  assert.is(last.firstName, poll.customer.firstName, 'the receiver is left with the state the order has');
});

test.run();
