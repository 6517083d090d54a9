import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { claimDueCommands } from '../../domain/use-cases/claim-due-commands.ts';
import { executeCommands } from '../../domain/use-cases/execute-command.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// The executor runs a claimed batch in one unit of work when all of it succeeds, and each command on its own when
// any fails. Here batches are claimed and run by hand (this suite starts no worker), on the real database.
const test = suite('brand command batches');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;
let brand: Awaited<ReturnType<typeof integrator>>;
const policy = { maxAttempts: 3, retryDelayMs: 1000 };

test.before(async () => {
  app = await appWithMailbox();
  brand = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    transformer: 'default',
    version: '1.3.0',
  });
});

const job = async () =>
  (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId })).apiId;
async function accept(fields: Record<string, unknown>) {
  const cid = randomUUID();
  const res = await app.http
    .post('/v3/commands')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({ _v: '1.0.0', _cid: cid, ...fields });
  assert.is(res.status, 202);
  return cid;
}
async function claimAll(cids: string[], leaseMs = 60_000) {
  const claimed = await app.services.unitOfWork().statements((deps) => claimDueCommands(deps, 100, leaseMs));
  // A command another suite left accepted (its worker stopped before running it) is given back as it was.
  const others = claimed.filter((c) => !cids.includes(c.cid));
  await app.services.unitOfWork().statements(async (deps) => {
    for (const c of others) await deps.commandQueue.release(c, deps.clock.now(), false);
  });
  assert.equal(
    claimed
      .filter((c) => cids.includes(c.cid))
      .map((c) => c.cid)
      .sort(),
    [...cids].sort(),
    'the batch holds the commands of this test',
  );
  return cids.map((cid) => claimed.find((c) => c.cid === cid)!);
}
const sql = <T>(text: string, values: unknown[]) =>
  app.database.orm.em.fork().getConnection().execute<T[]>(text, values);
const result = async (cid: string) =>
  (await app.http.get(`/v3/commands/${cid}`).set('authorization', `Bearer ${brand.accessToken}`)).body;
const orderEvents = (apiId: string) =>
  sql<{ n: number }>(`select count(*)::int as n from events where type = 'OrderStatusEvent' and order_id = ?`, [apiId]);

test('a batch that succeeds whole commits in one transaction, with every result and event', async () => {
  const [a, b] = [await job(), await job()];
  const cids = [
    await accept({ _type: 'UpdateOrderExternalId', orderId: a, externalId: 'batch-a' }),
    await accept({ _type: 'RefreshOrder', orderId: b }),
    await accept({ _type: 'UpdateOrderExternalId', orderId: a, externalId: 'batch-a-again' }),
  ];
  const eventsBefore = [(await orderEvents(a))[0]!.n, (await orderEvents(b))[0]!.n];
  const executions = await executeCommands(
    (work) => app.services.unitOfWork().transaction(work),
    await claimAll(cids),
    policy,
  );
  assert.equal(
    executions.map((e) => e.outcome),
    ['succeeded', 'succeeded', 'succeeded'],
  );
  const transactions = await sql<{ xmin: string }>(
    'select distinct xmin::text as xmin from commands where account_id = ? and cid in (?, ?, ?)',
    [brand.accountId, ...cids],
  );
  assert.is(transactions.length, 1, 'one transaction finished the three');
  assert.equal(
    [(await orderEvents(a))[0]!.n - eventsBefore[0]!, (await orderEvents(b))[0]!.n - eventsBefore[1]!],
    [2, 1],
  );
  const last = await app.http.get(`/v3/poll/job/*/${a}`).set('authorization', `Bearer ${brand.accessToken}`);
  assert.is(last.body.externalId, 'batch-a-again', 'the second change saw the first');
  for (const cid of cids) assert.is((await result(cid))._type, 'CommandResultEvent');
});

test('a batch with a failing command: nothing of the batch commits twice, the failure is recorded, the others succeed', async () => {
  const [a, b] = [await job(), await job()];
  const cids = [
    await accept({ _type: 'UpdateOrderExternalId', orderId: a, externalId: 'kept' }),
    await accept({ _type: 'ApplyCancellation', orderId: b, cancellationReason: 'NO_SUCH_REASON' }),
    await accept({ _type: 'RefreshOrder', orderId: 'no-such-order' }),
    await accept({ _type: 'RefreshOrder', orderId: b }),
  ];
  const eventsBefore = [(await orderEvents(a))[0]!.n, (await orderEvents(b))[0]!.n];
  const executions = await executeCommands(
    (work) => app.services.unitOfWork().transaction(work),
    await claimAll(cids),
    policy,
  );
  assert.equal(
    executions.map((e) => e.outcome),
    ['succeeded', 'failed', 'failed', 'succeeded'],
  );
  assert.equal(
    [(await result(cids[1]!)).code, (await result(cids[2]!)).code],
    ['UNKNOWN_CANCELLATION_REASON', 'ORDER_NOT_FOUND'],
  );
  assert.equal(
    [(await result(cids[0]!))._type, (await result(cids[3]!))._type],
    ['CommandResultEvent', 'CommandResultEvent'],
  );
  // The batch's first try was undone whole: each order has exactly the events of one run of its commands.
  assert.equal(
    [(await orderEvents(a))[0]!.n - eventsBefore[0]!, (await orderEvents(b))[0]!.n - eventsBefore[1]!],
    [1, 1],
  );
  const outcomes = await sql<{ n: number }>(
    `select count(*)::int as n from events where type in ('CommandResultEvent', 'CommandErrorEvent') and payload->>'_cid' in (?, ?, ?, ?)`,
    cids,
  );
  assert.is(outcomes[0]!.n, 4, 'one outcome event per command');
});

test('a batch fails at one command: the commands before and after it run again as batches, that one alone', async () => {
  const orders = [await job(), await job(), await job(), await job(), await job()];
  const cids = [
    await accept({ _type: 'RefreshOrder', orderId: orders[0] }),
    await accept({ _type: 'RefreshOrder', orderId: orders[1] }),
    await accept({ _type: 'RefreshOrder', orderId: 'no-such-order' }),
    await accept({ _type: 'RefreshOrder', orderId: orders[2] }),
    await accept({ _type: 'RefreshOrder', orderId: orders[3] }),
    await accept({ _type: 'RefreshOrder', orderId: orders[4] }),
  ];
  let units = 0;
  const undone: unknown[] = [];
  const transact: Parameters<typeof executeCommands>[0] = (work) => {
    units++;
    return app.services.unitOfWork().transaction(work);
  };
  const executions = await executeCommands(transact, await claimAll(cids), policy, {
    batchUndone: (error) => undone.push(error),
  });
  assert.equal(
    executions.map((e) => e.outcome),
    ['succeeded', 'succeeded', 'failed', 'succeeded', 'succeeded', 'succeeded'],
  );
  assert.is(undone.length, 1, 'only the first try was undone');
  // The first try; the two before it as one batch; the failing one alone (its try, then its recorded failure); the
  // three after it as one batch.
  assert.is(units, 5);
  for (const cid of [cids[0]!, cids[1]!, cids[3]!, cids[4]!, cids[5]!])
    assert.is((await result(cid))._type, 'CommandResultEvent');
  assert.is((await result(cids[2]!)).code, 'ORDER_NOT_FOUND');
});

test('an executor whose lease ran out finishes late, after another took the command over: its work is undone, the command ran once', async () => {
  const apiId = await job();
  const cid = await accept({ _type: 'RefreshOrder', orderId: apiId });
  const eventsBefore = (await orderEvents(apiId))[0]!.n;
  const [stale] = await claimAll([cid], 0); // a lease that has run out at once
  const [second] = await claimAll([cid]);
  assert.is(second!.attempts, 2, 'taken over');
  assert.equal(await executeCommands((work) => app.services.unitOfWork().transaction(work), [second!], policy), [
    { outcome: 'succeeded' },
  ]);
  assert.equal(
    await executeCommands((work) => app.services.unitOfWork().transaction(work), [stale!], policy),
    [{ outcome: 'lost' }],
    'the late finish is refused',
  );
  assert.is((await orderEvents(apiId))[0]!.n - eventsBefore, 1, 'one run of RefreshOrder: one OrderStatusEvent');
  const outcomes = await sql<{ eid: string }>(
    `select payload->>'_eid' as eid from events where type in ('CommandResultEvent', 'CommandErrorEvent') and payload->>'_cid' = ?`,
    [cid],
  );
  assert.is(outcomes.length, 1, 'one outcome event');
  assert.equal(
    [(await result(cid))._type, (await result(cid))._eid],
    ['CommandResultEvent', outcomes[0]!.eid],
    "the second executor's result is kept",
  );
});

test('two batches at once over the same orders, taken in opposite orders (one through an invoice), both commit whole (no deadlock)', async () => {
  // On the embedded database units of work run one at a time: nothing can deadlock there.
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const [low, high] = [await job(), await job()].sort();
  const { id: invoiceOfHigh } = await app.admin.call<{ id: string }>('invoices.create', {
    orderId: high!,
    number: `R-${randomUUID()}`,
    type: 'invoice',
    status: 'sent',
    items: [],
  });
  const claim = async (commands: Record<string, unknown>[]) => {
    const cids = [];
    for (const command of commands) cids.push(await accept(command));
    return claimAll(cids);
  };
  for (let round = 0; round < 3; round++) {
    const first = await claim([
      { _type: 'RefreshOrder', orderId: low! },
      { _type: 'RefreshOrder', orderId: high! },
    ]);
    const second = await claim([
      { _type: 'RefreshInvoice', invoiceId: invoiceOfHigh },
      { _type: 'RefreshOrder', orderId: low! },
    ]);
    const undone: unknown[] = [];
    const run = (batch: typeof first) =>
      executeCommands((work) => app.services.unitOfWork().transaction(work), batch, policy, {
        batchUndone: (error) => undone.push(error),
      });
    const executions = await Promise.all([run(first), run(second)]);
    assert.equal(undone, [], 'neither batch was undone');
    assert.equal(
      executions.flat().map((e) => e.outcome),
      ['succeeded', 'succeeded', 'succeeded', 'succeeded'],
    );
  }
});

test.run();
