import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { processClient } from '../../support/process.ts';
import { onPostgres, skipUnless } from '../../support/skip.ts';
import { restartableReceiver } from './receiver.ts';
import { assertUnavailable, type Outcome, timed } from './requests.ts';
import {
  ADMIN,
  brandWithOrders,
  deliveriesOf,
  errorsOf,
  refreshOrder,
  resultEventsPerCid,
  server,
  service,
  sleep,
  sqlOn,
  tempDir,
  untilExecuted,
  withFaultServer,
} from './support.ts';

// PostgreSQL stopped and started while integrators send commands and probes ask /readyz.
const test = suite('faults on PostgreSQL: the database restarted under load');
withFaultServer(test);

test('PostgreSQL stopped and started under load: /readyz follows it, nothing hangs, every accepted command runs once', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  // Short leases, so that a claim cut off by the stop is taken up again within seconds: a command lease of 3 s, and
  // a delivery lease of 2 × (2 × 1 s + 1 s) = 6 s.
  const dataDir = tempDir();
  const settings = { COMMAND_LEASE_MS: '3000', WEBHOOK_TIMEOUT_MS: '1000' };
  const api = service('api', 'faults_restart', dataDir, settings);
  const worker = service('worker', 'faults_restart', dataDir, settings);
  const [apiPort, workerPort] = await Promise.all([api.listening, worker.listening]);
  const client = processClient(apiPort, ADMIN);
  const receiver = await restartableReceiver();
  const brand = await brandWithOrders(client, dataDir, 5, receiver.url());
  const sql = await sqlOn('faults_restart');

  const outcomes: Outcome[] = [];
  const sent = new Map<string, { body: string; status: number | null }>();
  let loading = true;
  // Two integrators sending a command, polling its result and an order, again and again; and a readiness probe
  // on each process every 100 ms.
  const integratorLoop = async (n: number) => {
    for (let i = 0; loading; i++) {
      const cid = randomUUID();
      const body = refreshOrder(cid, brand.orderIds[(n + i) % brand.orderIds.length]!);
      const answer = await timed('command', `${client.base}/v3/commands`, { method: 'POST', body, token: brand.token });
      sent.set(cid, { body, status: answer.status });
      outcomes.push(answer);
      // Its result (204 or 200) when it was accepted; a refused one is unknown (404), which is no fault.
      if (answer.status === 202)
        outcomes.push(await timed('result', `${client.base}/v3/commands/${cid}`, { token: brand.token }));
      outcomes.push(
        await timed('order', `${client.base}/v3/poll/job/*/${brand.orderIds[i % brand.orderIds.length]}`, {
          token: brand.token,
        }),
      );
      // An integrator backs off after a failure (docs/integrators.md waits 0.5 s and more; 100 ms here, to keep going).
      await sleep(answer.status === 202 ? 40 : 100);
    }
  };
  const probeLoop = async (what: string, port: number) => {
    while (loading) {
      outcomes.push(await timed(what, `http://127.0.0.1:${port}/readyz`));
      await sleep(100);
    }
  };
  const load = [0, 1]
    .map(integratorLoop)
    .concat(probeLoop('readyz api', apiPort), probeLoop('readyz worker', workerPort));

  let stopping = 0,
    down = 0,
    starting = 0,
    up = 0,
    readyAgain = 0;
  try {
    await sleep(2000);
    stopping = Date.now();
    await server!.stop();
    down = Date.now();
    await sleep(3000);
    starting = Date.now();
    await server!.start();
    up = Date.now();
    // Both processes find the server again by themselves: no restart, and ready within a few probes.
    const readyBy = async (what: string) => {
      for (;;) {
        const ready = outcomes.find((o) => o.what === what && o.startedAt >= up && o.status === 200);
        if (ready) return ready.startedAt + ready.ms;
        assert.ok(Date.now() < up + 10_000, `${what} did not answer 200 within 10 s of the restart`);
        await sleep(50);
      }
    };
    readyAgain = Math.max(await readyBy('readyz api'), await readyBy('readyz worker'));
    await sleep(1500);
  } finally {
    loading = false;
    await Promise.all(load);
  }
  assert.is(api.child.exitCode, null, 'the API process kept running');
  assert.is(worker.child.exitCode, null, 'the worker process kept running');

  // Readiness: every probe made wholly while the server was down answered 503, and there were several of each.
  for (const what of ['readyz api', 'readyz worker']) {
    const whileDown = outcomes.filter((o) => o.what === what && o.startedAt >= down && o.startedAt + o.ms <= starting);
    assert.ok(whileDown.length >= 5, `${what}: only ${whileDown.length} probes while the server was down`);
    assert.equal([...new Set(whileDown.map((o) => o.status))], [503], `${what} while the server was down`);
  }
  // Nothing hung and nothing failed at the network level: every request got an answer, and quickly. A stopped
  // server refuses connections at once; the longest wait the service imposes then is the readiness ping's 5 s
  // (adapters/persistence/database/database.ts), so 6 s bounds every answer.
  const unanswered = outcomes.filter((o) => o.status === null);
  assert.equal(
    unanswered.map((o) => `${o.what}: ${o.error}`),
    [],
    'requests without an answer',
  );
  const slowest = outcomes.reduce((a, b) => (b.ms > a.ms ? b : a));
  assert.ok(slowest.ms <= 6000, `the slowest answer took ${slowest.ms} ms (${slowest.what}, status ${slowest.status})`);

  // Answers: while the server is up, only successes. A request that failed for want of the database got a 503
  // SERVICE_UNAVAILABLE with Retry-After (the same request may be sent again), telling nothing of the failure (no
  // stack, no driver error), and only between the stop and the moment both processes were ready again.
  const failures = outcomes.filter((o) => o.status! >= 400 && !o.what.startsWith('readyz'));
  const outside = failures.filter((o) => o.startedAt + o.ms < stopping || o.startedAt > readyAgain);
  assert.equal(
    outside.map((o) => `${o.what} ${o.status}`),
    [],
    'failures while the server was up',
  );
  assertUnavailable(failures);
  // For the operators, each of those 503s is a warning that names its cause, not an error line.
  // (The output kept is its tail: its first line may be cut.)
  const said = api
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{') && l.includes('the database cannot answer'));
  assert.ok(said.length > 0, 'the 503s were logged');
  assert.equal(
    said.filter((l) => !/"level":40/.test(l) || !/"cause":\{"type"/.test(l)).slice(0, 2),
    [],
    'a warning with its cause',
  );
  assert.not.match(api.output(), /"level":(50|60)/, `no error line for an outage:\n${errorsOf(api)}`);
  const accepted = [...sent].filter(([, s]) => s.status === 202).map(([cid]) => cid);
  const refused = [...sent].filter(([, s]) => s.status !== 202);
  assert.ok(failures.length > 0, 'some requests failed while the server was down (else the fault was not met)');
  assert.ok(accepted.length >= 20, `only ${accepted.length} commands were accepted`);
  assert.ok(
    outcomes.some((o) => o.what === 'command' && o.status === 202 && o.startedAt > readyAgain),
    'commands were accepted again after the restart',
  );

  // A command refused by the outage is sent again as an integrator would, with the same _cid and body: it is
  // accepted now (the first answer again, if it had been stored after all).
  for (const [cid, { body }] of refused) {
    const again = await timed('resend', `${client.base}/v3/commands`, { method: 'POST', body, token: brand.token });
    assert.is(again.status, 202, `resending ${cid}: ${again.status} ${again.body.slice(0, 200)}`);
  }
  // Every acknowledged command runs, exactly once; nothing else was stored.
  const all = [...sent.keys()];
  await untilExecuted(sql, brand.accountId, all, 20_000).catch((error: Error) => {
    throw new Error(`${error.message}\n${errorsOf(worker)}`);
  });
  const executions = await resultEventsPerCid(sql, brand.accountId);
  assert.equal(
    all.filter((cid) => executions.get(cid) !== 1).map((cid) => `${cid}: ${executions.get(cid) ?? 0}`),
    [],
    'commands that ran twice or never',
  );
  const [stored] = await sql<{ n: number }>('select count(*)::int as n from commands where account_id = $1', [
    brand.accountId,
  ]);
  assert.is(stored!.n, all.length, 'the commands stored are those sent');
  // And every event written for the brand reaches its endpoint (at least once), the stop notwithstanding.
  const events = (await deliveriesOf(sql, brand.accountId)).map((d) => d.event_id);
  assert.ok(
    events.length >= all.length * 2,
    `${events.length} deliveries for ${all.length} commands (an order event and a result each)`,
  );
  await receiver.untilAll(events, 20_000, 'events of the brand').catch((error: Error) => {
    throw new Error(`${error.message}\n${errorsOf(worker)}`);
  });
  await Promise.all([api.stop(), worker.stop()]);
});

test.run();
