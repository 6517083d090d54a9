import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { processClient } from '../../support/process.ts';
import { onPostgres, skipUnless } from '../../support/skip.ts';
import { assertFirstReceiptsInFeedOrder, assertRanOnce, eventsInFeedOrder } from './host-checks.ts';
import { restartableReceiver } from './receiver.ts';
import { postAlone } from './requests.ts';
import {
  ADMIN,
  brandWithOrders,
  errorsOf,
  refreshOrder,
  service,
  sleep,
  sqlOn,
  tempDir,
  untilExecuted,
  withFaultServer,
} from './support.ts';

// Two hosts, each an API process and a worker, on one PostgreSQL server, under brand commands and deliveries; one host
// is killed whole (SIGKILL to all its processes). The survivor takes over what the dead one held once its leases run
// out: nothing is lost, no command runs twice, and each order's events are first received in feed order.
const test = suite('faults on PostgreSQL: a host killed whole');
withFaultServer(test);

const COMMAND_LEASE_MS = 3000;
// WEBHOOK_TIMEOUT_MS 800: a delivery lease of 2 × (2 × 0.8 s + 1 s) = 5.2 s (server/compose.ts).
const DELIVERY_LEASE_MS = 5200;

test('a host killed whole under load: the other takes over, nothing lost, nothing run twice, order kept', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const dataDir = tempDir();
  const settings = {
    COMMAND_LEASE_MS: String(COMMAND_LEASE_MS),
    WEBHOOK_TIMEOUT_MS: '800',
    WEBHOOK_MAX_IN_FLIGHT: '4',
  };
  const host = () => ({
    api: service('api', 'faults_hosts', dataDir, settings),
    worker: service('worker', 'faults_hosts', dataDir, settings),
  });
  const [doomed, survivor] = [host(), host()];
  const ports = [await doomed.api.listening, await survivor.api.listening] as const;
  await Promise.all([doomed.worker.listening, survivor.worker.listening]);
  const receiver = await restartableReceiver(300);
  const brand = await brandWithOrders(processClient(ports[1], ADMIN), dataDir, 8, receiver.url());
  const sql = await sqlOn('faults_hosts');

  // Commands dealt to both hosts in turn, each on a connection of its own; the doomed host is killed once 60 have
  // been accepted and webhooks are being sent. A command whose request failed is sent again, with its _cid, to the
  // survivor, as a client retries.
  const accepted = new Set<string>();
  const sends: Promise<void>[] = [];
  let killedAt = 0;
  let heldAtKill: Promise<{ event_id: string }[]> = Promise.resolve([]);
  const killIfUnderLoad = () => {
    if (killedAt !== 0 || accepted.size < 60 || receiver.unanswered() === 0) return;
    doomed.api.child.kill('SIGKILL');
    doomed.worker.child.kill('SIGKILL');
    killedAt = Date.now();
    heldAtKill = sql<{ event_id: string }>(
      `select d.event_id::text as event_id from deliveries d join delivery_queue q on q.delivery_id = d.id
         where d.account_id = $1 and q.claim_token is not null`,
      [brand.accountId],
    );
  };
  const send = async (cid: string, orderId: string, port: number): Promise<void> => {
    const outcome = await postAlone(port, '/v3/commands', brand.token, refreshOrder(cid, orderId));
    if ('status' in outcome && (outcome.status === 202 || outcome.status === 200)) accepted.add(cid);
    else if (port === ports[0]) return send(cid, orderId, ports[1]);
    else assert.unreachable(`the survivor refused ${cid}: ${JSON.stringify(outcome)}`);
  };
  for (let i = 0; i < 160; i++) {
    const port = killedAt === 0 && i % 2 === 0 ? ports[0] : ports[1];
    sends.push(send(randomUUID(), brand.orderIds[i % brand.orderIds.length]!, port));
    killIfUnderLoad();
    await sleep(15);
  }
  // A slow machine may not have got there while sending: the deliveries are still under way.
  for (const deadline = Date.now() + 30_000; killedAt === 0; await sleep(10)) {
    assert.ok(Date.now() < deadline, 'the doomed host was killed under load');
    killIfUnderLoad();
  }
  await Promise.all(sends);
  await Promise.all([doomed.api.exited, doomed.worker.exited]);

  // Every accepted command runs, once, within the leases of what the dead host held.
  const cids = [...accepted];
  await untilExecuted(sql, brand.accountId, cids, COMMAND_LEASE_MS + 20_000).catch((error: Error) => {
    throw new Error(`${error.message}\n${errorsOf(survivor.worker)}`);
  });
  const allRun = Date.now() - killedAt;
  await assertRanOnce(sql, brand.accountId, cids);

  // Every event reaches the receiver, and each order's first receipts come in feed order (once the survivor's
  // sequencer has given the last of them their positions).
  const events = await eventsInFeedOrder(sql, brand.accountId);
  const allDelivered =
    (await receiver.untilAll(
      events.map((e) => e.id),
      DELIVERY_LEASE_MS + 30_000,
      'every event, after the kill',
    )) - killedAt;
  // At least once: only what a worker held when the host died may arrive twice.
  const held = new Set((await heldAtKill).map((h) => h.event_id));
  const counts = new Map<string, number>();
  for (const a of receiver.arrivals) counts.set(a.id, (counts.get(a.id) ?? 0) + 1);
  assert.equal(
    [...counts].filter(([id, n]) => n > 1 && !held.has(id)).map(([id]) => id),
    [],
    'events received twice that no worker held at the kill',
  );
  assertFirstReceiptsInFeedOrder(events, receiver.arrivals);
  // What an operator reads off a host's death (the bound is untilExecuted's above; this is the measure).
  console.log(
    `    ${cids.length} commands accepted, all run ${allRun} ms after the kill (lease ${COMMAND_LEASE_MS} ms); ` +
      `${events.length} events, all received ${allDelivered} ms after it ` +
      `(lease ${DELIVERY_LEASE_MS} ms, ${held.size} held)`,
  );
  await Promise.all([survivor.api.stop(), survivor.worker.stop()]);
});

test.run();
