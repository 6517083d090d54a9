import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { type ServiceProcess, startService } from '../support/process.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// Executors in processes of their own, sharing the PostgreSQL server of the suite (CI's second pass).
const test = suite('command executors in separate processes');
const server = process.env.DATABASE_URL;
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;
const workers: ServiceProcess[] = [];
const worker = (leaseMs: number) => {
  const started = startService({ DATABASE_URL: server!, SERVICE_ROLE: 'worker', COMMAND_LEASE_MS: String(leaseMs) });
  workers.push(started);
  return started;
};
test.after(async () => {
  for (const w of workers) await w.stop('SIGKILL');
});

const sql = <T>(text: string, values: unknown[] = []) =>
  app.database.orm.em.fork().getConnection().execute<T[]>(text, values);

async function brandWithOrder() {
  const brand = await integrator(app, 'brand');
  const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
  return { brand, apiId };
}

/**
 * Sends `n` RefreshOrder commands over REST (the API process is this one; it runs no executor); answers their _cids.
 */
async function sendCommands(brand: Awaited<ReturnType<typeof integrator>>, orderId: string, n: number) {
  const cids = Array.from({ length: n }, () => randomUUID());
  for (let i = 0; i < n; i += 50) {
    const answers = await Promise.all(
      cids
        .slice(i, i + 50)
        .map((cid) =>
          app.http
            .post('/v3/commands')
            .set('authorization', `Bearer ${brand.accessToken}`)
            .send({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId }),
        ),
    );
    assert.ok(answers.every((a) => a.status === 202));
  }
  return cids;
}

async function waitUntilFinished(accountId: string, n: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await sql<{ n: number }>(
      `select count(*)::int as n from commands where account_id = ? and status = 'succeeded'`,
      [accountId],
    );
    if (row!.n === n) return;
    assert.ok(Date.now() < deadline, `only ${row!.n} of ${n} commands ran within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** How many CommandResultEvents each _cid produced: exactly one per execution. */
async function executionsPerCid(accountId: string) {
  const rows = await sql<{ cid: string; n: number }>(
    `select payload->>'_cid' as cid, count(*)::int as n from events where account_id = ? and type = 'CommandResultEvent' group by 1`,
    [accountId],
  );
  return new Map(rows.map((r) => [r.cid, r.n]));
}

test.before(async () => {
  if (onPostgres) app = await appWithMailbox();
});

test('two executors and 500 commands: each command runs exactly once', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const { brand, apiId } = await brandWithOrder();
  const [a, b] = [worker(30_000), worker(30_000)];
  await Promise.all([a.listening, b.listening]);
  const cids = await sendCommands(brand, apiId, 500);
  await waitUntilFinished(brand.accountId, 500, 60_000);
  const executions = await executionsPerCid(brand.accountId);
  assert.is(executions.size, 500);
  assert.ok(
    cids.every((cid) => executions.get(cid) === 1),
    'a command ran twice or never',
  );
  const [orderEvents] = await sql<{ n: number }>(
    `select count(*)::int as n from events where account_id = ? and order_id = ? and type = 'OrderStatusEvent'`,
    [brand.accountId, apiId],
  );
  assert.is(orderEvents!.n, 501, 'one OrderStatusEvent for the creation and one per RefreshOrder');
  await Promise.all([a.stop(), b.stop()]);
});

test('an executor killed with SIGKILL while holding commands: they run after the lease, once', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  const { brand, apiId } = await brandWithOrder();
  const cids = await sendCommands(brand, apiId, 400);
  const doomed = worker(3000);
  await doomed.listening;
  let held: { cid: string; lease_until: string }[] = [];
  const deadline = Date.now() + 20_000;
  while (held.length === 0) {
    assert.ok(Date.now() < deadline, 'the executor never held a command');
    held = await sql<{ cid: string; lease_until: string }>(
      `select cid, lease_until from commands where account_id = ? and status = 'accepted' and claim_token is not null`,
      [brand.accountId],
    );
  }
  doomed.child.kill('SIGKILL');
  await doomed.exited;
  // What it held when it died: what it held earlier and finished before the kill is no longer held.
  const stillHeld = await sql<{ cid: string; lease_until: string }>(
    `select cid, lease_until from commands where account_id = ? and status = 'accepted' and claim_token is not null`,
    [brand.accountId],
  );
  assert.ok(stillHeld.length > 0, 'the killed executor held commands when it died');

  const successor = worker(3000);
  await successor.listening;
  await waitUntilFinished(brand.accountId, 400, 60_000);
  const executions = await executionsPerCid(brand.accountId);
  assert.ok(
    cids.every((cid) => executions.get(cid) === 1),
    'a command ran twice or never',
  );
  const late = await sql<{ n: number }>(
    `select count(*)::int as n from commands where account_id = ? and cid in (?) and finished_at < ?`,
    [brand.accountId, stillHeld.map((h) => h.cid), stillHeld.map((h) => h.lease_until).sort()[0]],
  );
  assert.is(late[0]!.n, 0, 'no command held by the dead executor ran before its lease ran out');
  await successor.stop();
});

test.run();
