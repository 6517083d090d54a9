import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { processClient } from '../../support/process.ts';
import { onPostgres, skipUnless } from '../../support/skip.ts';
import { restartableReceiver } from './receiver.ts';
import { postAlone } from './requests.ts';
import {
  ADMIN,
  brandWithOrders,
  deliveriesOf,
  errorsOf,
  refreshOrder,
  resultEventsPerCid,
  service,
  sleep,
  sqlOn,
  tempDir,
  untilExecuted,
  withFaultServer,
} from './support.ts';

// SIGTERM under load with deliveries under way: a clean exit, and nothing lost after a restart.
const test = suite('faults on PostgreSQL: SIGTERM under load');
withFaultServer(test);

test('SIGTERM under load with deliveries under way: requests answered, exit 0, no claim left, everything done after a restart', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  // Default leases (commands 60 s, deliveries 42 s): anything the stopped process left claimed would stay stuck far
  // longer than the 15 s the restarted one is given.
  const dataDir = tempDir();
  const first = service('all', 'faults_sigterm', dataDir);
  const port = await first.listening;
  const client = processClient(port, ADMIN);
  const receiver = await restartableReceiver(200);
  const brand = await brandWithOrders(client, dataDir, 10, receiver.url());
  const sql = await sqlOn('faults_sigterm');

  // A stream of commands, each on a connection of its own; SIGTERM once 80 have been accepted and webhooks are
  // being sent (a busy machine may take longer to start sending), with more requests under way, and 100 more sent
  // after it.
  const sent: Promise<{ cid: string; outcome: { status: number } | { error: string } }>[] = [];
  let acceptedSoFar = 0;
  let stopped: Promise<number | null> | undefined;
  let sendsAtStop = 0;
  let inFlightAtStop = 0;
  for (let i = 0, after = 0; after < 100; i++) {
    assert.ok(i < 2000, 'out of 2,000 commands, fewer than 80 were accepted, or no webhook was being sent');
    const cid = randomUUID();
    sent.push(
      postAlone(port, '/v3/commands', brand.token, refreshOrder(cid, brand.orderIds[i % brand.orderIds.length]!)).then(
        (outcome) => {
          if ('status' in outcome && outcome.status === 202) acceptedSoFar++;
          return { cid, outcome };
        },
      ),
    );
    if (stopped) after++;
    else if (acceptedSoFar >= 80 && receiver.unanswered() > 0) {
      sendsAtStop = receiver.unanswered();
      inFlightAtStop = sent.length - acceptedSoFar;
      stopped = first.stop('SIGTERM');
    }
    await sleep(3);
  }
  const outcomes = await Promise.all(sent);
  assert.is(await stopped, 0, first.output().slice(-2000));
  assert.ok(sendsAtStop > 0, 'webhooks were being sent when the signal came');
  assert.ok(inFlightAtStop > 0, 'requests were under way when the signal came');
  const accepted = outcomes.filter((o) => 'status' in o.outcome && o.outcome.status === 202).map((o) => o.cid);
  const others = outcomes
    .filter((o) => !('status' in o.outcome && o.outcome.status === 202))
    .map((o) => ('status' in o.outcome ? `status ${o.outcome.status}` : o.outcome.error));
  assert.ok(accepted.length >= 80, `only ${accepted.length} of ${outcomes.length} were accepted`);
  // A request the service took is answered; one that came after the close is refused or reset, never hung or failed.
  assert.equal(
    [...new Set(others)].filter((e) => e !== 'ECONNREFUSED' && e !== 'ECONNRESET'),
    [],
    'outcomes besides 202 and refused or reset connections',
  );
  assert.match(first.output(), '"msg":"stopped"');
  assert.not.match(first.output(), /"msg":"request (aborted|errored)"/);
  assert.not.match(first.output(), /"level":(50|60)/, `no error logged while stopping:\n${errorsOf(first)}`);

  // Nothing is left claimed: the executor finished what it had claimed, the sender recorded its sends and gave
  // back what it had not sent.
  const claimedCommands = await sql(
    `select cid, status, lease_until from commands where account_id = $1 and claim_token is not null`,
    [brand.accountId],
  );
  assert.equal(claimedCommands, [], 'commands left claimed by the stopped process');
  const claimedDeliveries = (await deliveriesOf(sql, brand.accountId)).filter((d) => d.claim_token !== null);
  assert.equal(
    claimedDeliveries.map((d) => d.event_id),
    [],
    'deliveries left claimed by the stopped process',
  );

  const second = service('all', 'faults_sigterm', dataDir);
  await second.listening;
  await untilExecuted(sql, brand.accountId, accepted, 15_000).catch((error: Error) => {
    throw new Error(`${error.message}\n${errorsOf(second)}`);
  });
  const executions = await resultEventsPerCid(sql, brand.accountId);
  assert.equal(
    accepted.filter((cid) => executions.get(cid) !== 1).map((cid) => `${cid}: ${executions.get(cid) ?? 0}`),
    [],
    'commands that ran twice or never',
  );
  const events = (await deliveriesOf(sql, brand.accountId)).map((d) => d.event_id);
  await receiver.untilAll(events, 15_000, 'every event, after the restart').catch((error: Error) => {
    throw new Error(`${error.message}\n${errorsOf(second)}`);
  });
  await sleep(300);
  const after = await deliveriesOf(sql, brand.accountId);
  assert.equal(
    after.filter((d) => d.status !== 'delivered' || d.claim_token !== null).map((d) => `${d.event_id}: ${d.status}`),
    [],
    'deliveries left undelivered or claimed',
  );
  assert.is(await second.stop(), 0);
});

test.run();
