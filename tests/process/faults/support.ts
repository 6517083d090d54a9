import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Test } from 'uvu';
import { integratorLoggedIn, type processClient, type ServiceProcess, startService } from '../../support/process.ts';
import { onPostgres } from '../../support/skip.ts';
import { startTempPostgres, type TempPostgres } from '../../support/temp-postgres.ts';

// Faults on PostgreSQL (CI's second pass, with DATABASE_URL): the database restarted under load, a webhook receiver
// away for a while, a delivery worker killed with SIGKILL, and SIGTERM under load with deliveries under way, a suite
// each beside this file. The tests stop and start PostgreSQL, so each suite runs on a server of its own
// (tests/support/temp-postgres.ts), one database per test; the runner's server only says that this pass has
// PostgreSQL. On the embedded pass the tests skip themselves: these faults need separate processes sharing a server.
// This file holds what the suites share: the server and its databases, service processes, brands with orders, and
// plain SQL on the queues.
export const ADMIN = 'faults-admin-token-0123456789';
export const JWT_SECRET = 'faults-jwt-secret-0123456789-0123456789-0123456789';
/** A request taking longer than this counts as hung (and is abandoned): well above every bound the suites assert. */
export const HANG_MS = 15_000;

export let server: TempPostgres | undefined;
export const processes: ServiceProcess[] = [];
/** Stops each receiver started. */
export const receivers: (() => Promise<void>)[] = [];
export const pools: pg.Pool[] = [];
export const dirs: string[] = [];
/** One database per test on the test's own server. */
export const DATABASES = [
  'faults_restart',
  'faults_receiver',
  'faults_sigkill',
  'faults_sigterm',
  'faults_hosts',
] as const;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A service process on the test's own server, database `database`; settings besides these come from `extra`. */
export function service(
  role: 'all' | 'api' | 'worker',
  database: (typeof DATABASES)[number],
  dataDir: string,
  extra: Record<string, string> = {},
) {
  const started = startService({
    DATABASE_URL: server!.url(database),
    SERVICE_ROLE: role,
    DATA_DIR: dataDir,
    JWT_SECRET,
    ADMIN_TOKEN: ADMIN,
    API_RATE_LIMIT_PER_ACCOUNT: '1000000',
    API_CONCURRENCY_PER_ACCOUNT: '10000',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    LOG_LEVEL: 'info',
    ...extra,
  });
  processes.push(started);
  return started;
}

export function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), 'pbi-faults-'));
  dirs.push(dir);
  return dir;
}

/**
 * Plain SQL on the test's database, to look at queues and outboxes as they are: a pool of one connection, which
 * connects again after the server's restart (a connection the stop ended is dropped, not thrown).
 */
export async function sqlOn(database: (typeof DATABASES)[number]) {
  const pool = new pg.Pool({ connectionString: server!.url(database), max: 1 });
  pool.on('error', () => {});
  pools.push(pool);
  return async <T>(text: string, values: unknown[] = []) => (await pool.query(text, values)).rows as T[];
}

/** The log lines of level error and fatal, for failure messages. */
export const errorsOf = (p: ServiceProcess) =>
  p
    .output()
    .split('\n')
    .filter((l) => /"level":(50|60)/.test(l))
    .slice(0, 3)
    .join('\n')
    .slice(0, 3000);

export const refreshOrder = (cid: string, orderId: string) =>
  JSON.stringify({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId });

/** A brand logged in through the API process, with `orders` orders and its brand endpoint at `url` (if given). */
export async function brandWithOrders(
  client: ReturnType<typeof processClient>,
  dataDir: string,
  orders: number,
  url?: string,
) {
  const { accountId, token } = await integratorLoggedIn(
    client,
    dataDir,
    'brand',
    `faults-${randomUUID().slice(0, 8)}@example.com`,
  );
  if (url)
    await client.admin('webhookConfigs.upsert', {
      accountId,
      scope: 'brand',
      url,
      transformer: 'default',
      version: '1.3.0',
    });
  const orderIds: string[] = [];
  for (let i = 0; i < orders; i++)
    orderIds.push((await client.admin<{ apiId: string }>('jobs.create', { brandAccountId: accountId })).apiId);
  return { accountId, token, orderIds };
}

export type Sql = Awaited<ReturnType<typeof sqlOn>>;

/** Waits until every command in `cids` of the account has run; fails with what is left after `timeoutMs`. */
export async function untilExecuted(sql: Sql, accountId: string, cids: readonly string[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await sql<{ n: number }>(
      `select count(*)::int as n from commands where account_id = $1 and cid = any($2) and status = 'succeeded'`,
      [accountId, cids],
    );
    if (row!.n === cids.length) return;
    if (Date.now() > deadline) {
      const left = await sql(
        `select cid, status, attempts, lease_until, claim_token from commands where account_id = $1 and cid = any($2) and status <> 'succeeded' limit 5`,
        [accountId, cids],
      );
      throw new Error(
        `only ${row!.n} of ${cids.length} commands ran within ${timeoutMs} ms; left, e.g.: ${JSON.stringify(left)}`,
      );
    }
    await sleep(100);
  }
}

/** How many CommandResultEvents each _cid of the account produced: one per execution. */
export async function resultEventsPerCid(sql: Sql, accountId: string) {
  const rows = await sql<{ cid: string; n: number }>(
    `select payload->>'_cid' as cid, count(*)::int as n from events where account_id = $1 and type = 'CommandResultEvent' group by 1`,
    [accountId],
  );
  return new Map(rows.map((r) => [r.cid, r.n]));
}

/** The events to be delivered to the account's endpoint: their ids, order ids and creation order. */
export const deliveriesOf = (sql: Sql, accountId: string) =>
  sql<{
    id: string;
    event_id: string;
    order_id: string | null;
    status: string;
    claim_token: string | null;
    lease_until: Date | null;
  }>(
    `select d.id, d.event_id, d.order_id, d.status, q.claim_token, q.lease_until
   from deliveries d left join delivery_queue q on q.delivery_id = d.id where d.account_id = $1 order by d.seq`,
    [accountId],
  );

// Should the run end without the after hook (a crash), the processes and the server still go.
const leftovers = () => {
  for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  server?.destroySync();
};

/** Gives a suite a PostgreSQL server of its own, with the tests' databases, and cleans up what its tests started. */
export function withFaultServer(test: Test) {
  test.before(async () => {
    if (!onPostgres) return; // the tests skip themselves
    process.once('exit', leftovers);
    // fsync off spares the disk of a busy test machine; a clean stop still checkpoints, so a restart loses nothing.
    server = await startTempPostgres({ fsync: 'off' });
    // Made here, not by the processes: two of them starting at once on a missing database race to create it.
    const admin = new pg.Client({ connectionString: server.url('postgres') });
    await admin.connect();
    for (const name of DATABASES) await admin.query(`create database ${name}`);
    await admin.end();
  });
  test.after(async () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    for (const stop of receivers) await stop();
    for (const pool of pools) await pool.end().catch(() => {});
    await server?.destroy();
    server = undefined;
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    process.removeListener('exit', leftovers);
    processes.length = 0;
    receivers.length = 0;
    pools.length = 0;
    dirs.length = 0;
  });
}
