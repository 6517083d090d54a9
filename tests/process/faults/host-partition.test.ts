import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { netnsUnavailable, startNetnsHost } from '../../support/netns-host.ts';
import { processClient, type ServiceProcess, startScript } from '../../support/process.ts';
import { onPostgres, skipUnless } from '../../support/skip.ts';
import { startTempPostgres } from '../../support/temp-postgres.ts';
import { assertFirstReceiptsInFeedOrder, assertRanOnce, eventsInFeedOrder } from './host-checks.ts';
import { restartableReceiver } from './receiver.ts';
import { postAlone } from './requests.ts';
import { ADMIN, brandWithOrders, errorsOf, JWT_SECRET, refreshOrder, sleep, untilExecuted } from './support.ts';

// Two hosts, each an API process and a worker, on one PostgreSQL server; one of them lives in a network namespace
// (tests/support/netns-host.ts) whose link is taken down under load, cutting it off from PostgreSQL and the receiver
// for longer than the leases, and then brought back. The other takes over what the cut-off host held; when the link
// returns, what that host still tries to commit or record is refused: nothing lost, nothing run twice, order kept.
const test = suite('faults on PostgreSQL: a host cut off by the network, then back');
const unavailable = netnsUnavailable();

const COMMAND_LEASE_MS = 3000;
// Past both leases (commands 3 s, deliveries 5.2 s) and the server's hold on a transaction left open by the cut-off
// host (DATABASE_TIMEOUT_MS: 10 s, idle_in_transaction_session_timeout), which must not wait for the link.
const CUT_MS = 20_000;

test('a host cut off under load, then back: the other takes over, nothing lost or run twice, order kept', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  if (skipUnless(!unavailable, unavailable ?? '')) return;
  const host = startNetnsHost();
  const dir = mkdtempSync(join(tmpdir(), 'pbi-partition-'));
  chmodSync(dir, 0o755);
  const started: ServiceProcess[] = [];
  let server: Awaited<ReturnType<typeof startTempPostgres>> | undefined;
  let pool: pg.Pool | undefined;
  let healing: NodeJS.Timeout | undefined;
  try {
    // The server listens on the link too, and trusts the host's subnet.
    const hba = join(dir, 'pg_hba.conf');
    writeFileSync(
      hba,
      ['local all all trust', 'host all all 127.0.0.1/32 trust', `host all all ${host.insideIp}/32 trust`, ''].join(
        '\n',
      ),
    );
    chmodSync(hba, 0o644);
    server = await startTempPostgres({ fsync: 'off', listen_addresses: `127.0.0.1,${host.outsideIp}`, hba_file: hba });
    const admin = new pg.Client({ connectionString: server.url('postgres') });
    await admin.connect();
    await admin.query('create database faults_partition');
    await admin.end();
    pool = new pg.Pool({ connectionString: server.url('faults_partition'), max: 1 });
    pool.on('error', () => {});
    const sql = async <T>(text: string, values: unknown[] = []) => (await pool!.query(text, values)).rows as T[];

    const dataDir = join(dir, 'data');
    const env = (databaseHost: string, role: 'api' | 'worker') => ({
      DATABASE_URL: `postgres://postgres@${databaseHost}:${server!.port}/faults_partition`,
      SERVICE_ROLE: role,
      DATA_DIR: dataDir,
      JWT_SECRET,
      ADMIN_TOKEN: ADMIN,
      API_RATE_LIMIT_PER_ACCOUNT: '1000000',
      API_CONCURRENCY_PER_ACCOUNT: '10000',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
      COMMAND_LEASE_MS: String(COMMAND_LEASE_MS),
      WEBHOOK_TIMEOUT_MS: '800',
      WEBHOOK_MAX_IN_FLIGHT: '4',
      LOG_LEVEL: 'info',
    });
    const start = (databaseHost: string, role: 'api' | 'worker', netns?: string) => {
      const p = startScript('server/main.ts', env(databaseHost, role), netns ? { netns } : {});
      started.push(p);
      return p;
    };
    const steady = { api: start('127.0.0.1', 'api'), worker: start('127.0.0.1', 'worker') };
    const cutOff = { api: start(host.outsideIp, 'api', host.name), worker: start(host.outsideIp, 'worker', host.name) };
    const ports = [await steady.api.listening, await cutOff.api.listening] as const;
    await Promise.all([steady.worker.listening, cutOff.worker.listening]);
    // The receiver on the link's address: both hosts reach it, the cut-off one only while the link is up.
    const receiver = await restartableReceiver(300, host.outsideIp);
    const brand = await brandWithOrders(processClient(ports[0], ADMIN), dataDir, 8, receiver.url());

    // Commands dealt to both hosts in turn, each on a connection of its own; the link goes down once 60 are accepted
    // and webhooks are under way, and comes back CUT_MS later. A request the cut-off host could not answer is sent
    // again with its _cid to the other, as a client retries.
    const accepted = new Set<string>();
    const sends: Promise<void>[] = [];
    let cutAt = 0;
    let acceptedAtCut: string[] = [];
    const cutIfUnderLoad = () => {
      if (cutAt !== 0 || accepted.size < 60 || receiver.unanswered() === 0) return;
      host.cut();
      cutAt = Date.now();
      acceptedAtCut = [...accepted];
      healing = setTimeout(() => host.heal(), CUT_MS);
    };
    const send = async (cid: string, orderId: string, to: 0 | 1): Promise<void> => {
      const outcome = await postAlone(
        to === 0 ? ports[0] : ports[1],
        '/v3/commands',
        brand.token,
        refreshOrder(cid, orderId),
        to === 1 ? host.insideIp : undefined,
      );
      if ('status' in outcome && (outcome.status === 202 || outcome.status === 200)) accepted.add(cid);
      else if (to === 1) return send(cid, orderId, 0);
      else assert.unreachable(`the steady host refused ${cid}: ${JSON.stringify(outcome)}`);
    };
    for (let i = 0; i < 160; i++) {
      sends.push(send(randomUUID(), brand.orderIds[i % brand.orderIds.length]!, cutAt === 0 && i % 2 === 1 ? 1 : 0));
      cutIfUnderLoad();
      await sleep(15);
    }
    // A slow machine may not have got there while sending: the deliveries are still under way.
    for (const deadline = Date.now() + 30_000; cutAt === 0; await sleep(10)) {
      assert.ok(Date.now() < deadline, 'the link was cut under load');
      cutIfUnderLoad();
    }
    while (Date.now() < cutAt + CUT_MS + 200) await sleep(100);
    await Promise.all(sends);

    const cids = [...accepted];
    await untilExecuted(sql, brand.accountId, cids, COMMAND_LEASE_MS + CUT_MS + 20_000).catch((error: Error) => {
      throw new Error(`${error.message}\n${errorsOf(steady.worker)}\n${errorsOf(cutOff.worker)}`);
    });
    const allRun = Date.now() - cutAt;
    // What was accepted before the cut ran while the link was down: the other host took over whatever the cut-off one
    // had claimed, within the lease and the server's hold on its open transaction.
    const finished = await sql<{ cid: string; finished_at: Date }>(
      'select cid, finished_at from commands where account_id = $1 and cid = any($2)',
      [brand.accountId, acceptedAtCut],
    );
    assert.equal(
      finished.filter((c) => c.finished_at.getTime() >= cutAt + CUT_MS).map((c) => c.cid),
      [],
      'commands accepted before the cut that waited for the link',
    );
    await assertRanOnce(sql, brand.accountId, cids);
    const events = await eventsInFeedOrder(sql, brand.accountId);
    const allDelivered =
      (await receiver.untilAll(
        events.map((e) => e.id),
        60_000,
        'every event, after the cut',
      )) - cutAt;
    assertFirstReceiptsInFeedOrder(events, receiver.arrivals);
    // The cut-off host is back: it serves again.
    assert.is((await fetch(`http://${host.insideIp}:${ports[1]}/readyz`)).status, 200);
    console.log(
      `    ${cids.length} commands accepted, all run ${allRun} ms after the cut (lease ${COMMAND_LEASE_MS} ms, ` +
        `link down ${CUT_MS} ms); ${events.length} events, all received ${allDelivered} ms after it`,
    );
  } finally {
    clearTimeout(healing);
    host.heal();
    for (const p of started) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await Promise.all(started.map((p) => p.exited));
    await pool?.end().catch(() => {});
    await server?.destroy();
    host.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
