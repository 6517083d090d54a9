import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { processClient } from '../../support/process.ts';
import { onPostgres, skipUnless } from '../../support/skip.ts';
import { restartableReceiver } from './receiver.ts';
import {
  ADMIN,
  brandWithOrders,
  deliveriesOf,
  errorsOf,
  service,
  sleep,
  sqlOn,
  tempDir,
  withFaultServer,
} from './support.ts';

// A delivery worker killed with SIGKILL while holding deliveries: the lease hands them to another.
const test = suite('faults on PostgreSQL: a delivery worker killed');
withFaultServer(test);

test('a delivery worker killed with SIGKILL while holding deliveries: another takes them up after the lease', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  // WEBHOOK_TIMEOUT_MS 800 gives a delivery lease of 2 × (2 × 0.8 s + 1 s) = 5.2 s (server/compose.ts); four sends
  // at once and a receiver that answers after 150 ms keep claims held (eight at most) while the worker runs.
  const dataDir = tempDir();
  const workerSettings = { WEBHOOK_TIMEOUT_MS: '800', WEBHOOK_MAX_IN_FLIGHT: '4' };
  const api = service('api', 'faults_sigkill', dataDir);
  const client = processClient(await api.listening, ADMIN);
  const receiver = await restartableReceiver(150);
  // 60 orders, one event each, written before any worker runs.
  const brand = await brandWithOrders(client, dataDir, 60, receiver.url());
  const sql = await sqlOn('faults_sigkill');
  const events = (await deliveriesOf(sql, brand.accountId)).map((d) => d.event_id);
  assert.is(events.length, 60);

  const doomed = service('worker', 'faults_sigkill', dataDir, workerSettings);
  await doomed.listening;
  const deadline = Date.now() + 20_000;
  while (receiver.arrivals.length < 12) {
    assert.ok(
      Date.now() < deadline,
      `the worker delivered only ${receiver.arrivals.length} events in 20 s\n${errorsOf(doomed)}`,
    );
    await sleep(10);
  }
  doomed.child.kill('SIGKILL');
  await doomed.exited;
  const killed = Date.now();
  const held = (await deliveriesOf(sql, brand.accountId)).filter((d) => d.claim_token !== null);
  assert.ok(held.length > 0, 'the killed worker held deliveries when it died');
  assert.ok(receiver.ids().size < 60, 'killed before it had sent everything');

  const successor = service('worker', 'faults_sigkill', dataDir, workerSettings);
  await successor.listening;
  await receiver.untilAll(events, 30_000, 'every event, after the kill').catch((error: Error) => {
    throw new Error(`${error.message}\n${errorsOf(successor)}`);
  });
  // The dead worker's claims were left alone until their lease ran out, then sent.
  for (const h of held) {
    const leaseEnd = h.lease_until!.getTime();
    const early = receiver.arrivals.filter((a) => a.id === h.event_id && a.at > killed && a.at < leaseEnd);
    assert.is(
      early.length,
      0,
      `delivery ${h.id} was sent again ${leaseEnd - (early[0]?.at ?? leaseEnd)} ms before its lease ran out`,
    );
  }
  // At least once; only what the dead worker may have sent without recording it (a claim it held) arrives twice.
  const counts = new Map<string, number>();
  for (const a of receiver.arrivals) counts.set(a.id, (counts.get(a.id) ?? 0) + 1);
  const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
  const heldEvents = new Set(held.map((h) => h.event_id));
  assert.equal(
    twice.filter((id) => !heldEvents.has(id)),
    [],
    'events received twice that the dead worker did not hold',
  );
  assert.ok(
    [...counts.values()].every((n) => n <= 2),
    'no event received more than twice',
  );
  await sleep(300);
  const after = await deliveriesOf(sql, brand.accountId);
  assert.equal(
    after.filter((d) => d.status !== 'delivered' || d.claim_token !== null).map((d) => `${d.event_id}: ${d.status}`),
    [],
    'deliveries left undelivered or claimed',
  );
  await Promise.all([api.stop(), successor.stop()]);
});

test.run();
