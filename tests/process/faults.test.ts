import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { document } from '../support/app.ts';
import { answerChecker } from '../support/openapi-validation.ts';
import { integratorLoggedIn, processClient, startService, type ServiceProcess } from '../support/process.ts';
import { startTempPostgres, type TempPostgres } from '../support/temp-postgres.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// Faults on PostgreSQL (CI's second pass, with DATABASE_URL): the database restarted under load, a webhook receiver
// away for a while, a delivery worker killed with SIGKILL, and SIGTERM under load with deliveries under way. The tests
// stop and start PostgreSQL, so they run on a server of their own (tests/support/temp-postgres.ts), one database per
// test; the suite's server only says that this pass has PostgreSQL. On the embedded pass the tests skip themselves:
// these faults need separate processes sharing a server.
const test = suite('faults on PostgreSQL');

const ADMIN = 'faults-admin-token-0123456789';
const JWT_SECRET = 'faults-jwt-secret-0123456789-0123456789-0123456789';
/** A request taking longer than this counts as hung (and is abandoned): well above every bound asserted below. */
const HANG_MS = 15_000;

let server: TempPostgres | undefined;
const processes: ServiceProcess[] = [];
/** Stops each receiver started. */
const receivers: (() => Promise<void>)[] = [];
const pools: pg.Pool[] = [];
const dirs: string[] = [];
/** One database per test on the test's own server. */
const DATABASES = ['faults_restart', 'faults_receiver', 'faults_sigkill', 'faults_sigterm'] as const;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A service process on the test's own server, database `database`; settings besides these come from `extra`. */
function service(role: 'all' | 'api' | 'worker', database: typeof DATABASES[number], dataDir: string, extra: Record<string, string> = {}) {
  const started = startService({
    DATABASE_URL: server!.url(database), SERVICE_ROLE: role, DATA_DIR: dataDir, JWT_SECRET, ADMIN_TOKEN: ADMIN,
    API_RATE_LIMIT_PER_ACCOUNT: '1000000', API_CONCURRENCY_PER_ACCOUNT: '10000', WEBHOOK_ALLOW_PRIVATE_TARGETS: '1', LOG_LEVEL: 'info', ...extra,
  });
  processes.push(started);
  return started;
}

function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), 'pbi-faults-'));
  dirs.push(dir);
  return dir;
}

/**
 * Plain SQL on the test's database, to look at queues and outboxes as they are: a pool of one connection, which
 * connects again after the server's restart (a connection the stop ended is dropped, not thrown).
 */
async function sqlOn(database: typeof DATABASES[number]) {
  const pool = new pg.Pool({ connectionString: server!.url(database), max: 1 });
  pool.on('error', () => {});
  pools.push(pool);
  return async <T>(text: string, values: unknown[] = []) => (await pool.query(text, values)).rows as T[];
}

/** The log lines of level error and fatal, for failure messages. */
const errorsOf = (p: ServiceProcess) => p.output().split('\n').filter((l) => /"level":(50|60)/.test(l)).slice(0, 3).join('\n').slice(0, 3000);

interface Arrival { id: string; at: number; payload: Record<string, unknown> }

/**
 * A webhook receiver that can be stopped (its port then refuses connections) and started again on the same port.
 * Records each request when it has arrived whole, then answers 200 after `delayMs`.
 */
async function restartableReceiver(delayMs = 0) {
  const arrivals: Arrival[] = [];
  let unanswered = 0;
  let current: http.Server | null = null;
  let port = 0;
  const listen = () => new Promise<void>((resolve, reject) => {
    const srv = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => { body += chunk; });
      req.on('end', () => {
        let payload: Record<string, unknown> = {};
        try { payload = JSON.parse(body); } catch { /* kept empty */ }
        arrivals.push({ id: String(req.headers['webhook-id']), at: Date.now(), payload });
        unanswered++;
        setTimeout(() => { unanswered--; res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'); }, delayMs);
      });
    });
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => {
      port = (srv.address() as { port: number }).port;
      current = srv;
      resolve();
    });
  });
  await listen();
  const receiver = {
    get port() { return port; },
    url: (path = '/hooks') => `http://127.0.0.1:${port}${path}`,
    arrivals,
    /** Requests received and not answered yet: sends under way. */
    unanswered: () => unanswered,
    ids: () => new Set(arrivals.map((a) => a.id)),
    start: listen,
    /** Closes the listener and every connection: from now on the port refuses connections. */
    stop: () => new Promise<void>((resolve) => {
      const srv = current;
      current = null;
      if (!srv) return resolve();
      srv.closeAllConnections();
      srv.close(() => resolve());
    }),
    /** Resolves once every id has arrived at least once, or fails after `timeoutMs`. */
    async untilAll(ids: readonly string[], timeoutMs: number, what: string) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const got = receiver.ids();
        const missing = ids.filter((id) => !got.has(id));
        if (missing.length === 0) return Date.now();
        if (Date.now() > deadline) throw new Error(`${what}: ${missing.length} of ${ids.length} events did not arrive within ${timeoutMs} ms`);
        await sleep(50);
      }
    },
  };
  receivers.push(receiver.stop);
  return receiver;
}

interface Outcome { what: string; status: number | null; error?: string; body: string; contentType: string; retryAfter?: string | null; requestId?: string | null; method: string; url: string; startedAt: number; ms: number }

/** One request with a deadline (HANG_MS): its status, or the network error or `hung` in its place, and its duration. */
async function timed(what: string, url: string, init: RequestInit & { token?: string } = {}): Promise<Outcome> {
  const startedAt = Date.now();
  try {
    const res = await fetch(url, {
      ...init,
      headers: { ...(init.body !== undefined && { 'content-type': 'application/json' }), ...(init.token && { authorization: `Bearer ${init.token}` }) },
      signal: AbortSignal.timeout(HANG_MS),
    });
    const body = await res.text();
    return {
      what, status: res.status, body, contentType: res.headers.get('content-type') ?? '', retryAfter: res.headers.get('retry-after'),
      requestId: res.headers.get('x-request-id'), method: (init.method ?? 'GET').toLowerCase(), url, startedAt, ms: Date.now() - startedAt,
    };
  } catch (error) {
    const e = error as Error & { cause?: { code?: string } };
    return { what, status: null, error: e.name === 'TimeoutError' ? 'hung' : e.cause?.code ?? e.message, body: '', contentType: '', method: (init.method ?? 'GET').toLowerCase(), url, startedAt, ms: Date.now() - startedAt };
  }
}

/** One POST on a connection of its own (nothing kept alive for a closing listener to race with). */
function postAlone(port: number, path: string, token: string, body: string): Promise<{ status: number } | { error: string }> {
  return new Promise((resolve) => {
    const req = http.request({
      host: '127.0.0.1', port, path, method: 'POST', agent: false, timeout: HANG_MS,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${token}` },
    }, (res) => { res.resume(); res.on('end', () => resolve({ status: res.statusCode! })); });
    req.on('timeout', () => { req.destroy(); resolve({ error: 'hung' }); });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end(body);
  });
}

const refreshOrder = (cid: string, orderId: string) => JSON.stringify({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId });

/** A brand logged in through the API process, with `orders` orders and its brand endpoint at `url` (if given). */
async function brandWithOrders(client: ReturnType<typeof processClient>, dataDir: string, orders: number, url?: string) {
  const { accountId, token } = await integratorLoggedIn(client, dataDir, 'brand', `faults-${randomUUID().slice(0, 8)}@example.com`);
  if (url) await client.admin('webhookConfigs.upsert', { accountId, scope: 'brand', url, transformer: 'default', version: '1.3.0' });
  const orderIds: string[] = [];
  for (let i = 0; i < orders; i++) orderIds.push((await client.admin<{ apiId: string }>('jobs.create', { brandAccountId: accountId })).apiId);
  return { accountId, token, orderIds };
}

type Sql = Awaited<ReturnType<typeof sqlOn>>;

const checkAnswer = answerChecker(document());

/** Every failure is a 503 SERVICE_UNAVAILABLE problem with Retry-After, as documented, and tells nothing of its cause. */
function assertUnavailable(failures: readonly Outcome[]) {
  assert.equal(failures.filter((o) => o.status !== 503).map((o) => `${o.what} ${o.status}: ${o.body.slice(0, 200)}`), [], 'failures besides 503');
  for (const failure of failures) {
    assert.match(failure.contentType, /^application\/problem\+json/, `${failure.what} ${failure.status}`);
    const problem = JSON.parse(failure.body) as Record<string, unknown>;
    assert.is(problem.status, 503);
    assert.is(problem.code, 'SERVICE_UNAVAILABLE');
    assert.is(failure.retryAfter, '5', `${failure.what}: Retry-After`);
    checkAnswer(failure.method, failure.url, { status: 503, headers: { 'content-type': failure.contentType, 'x-request-id': failure.requestId }, body: problem, text: failure.body } as never);
    assert.not.match(failure.body, /ECONNREFUSED|SQLSTATE|57P0|timeout|\bat \S+:\d+|node_modules|stack/i, `${failure.what} tells the failure: ${failure.body.slice(0, 300)}`);
  }
}

/** Waits until every command in `cids` of the account has run; fails with what is left after `timeoutMs`. */
async function untilExecuted(sql: Sql, accountId: string, cids: readonly string[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await sql<{ n: number }>(`select count(*)::int as n from commands where account_id = $1 and cid = any($2) and status = 'succeeded'`, [accountId, cids]);
    if (row!.n === cids.length) return;
    if (Date.now() > deadline) {
      const left = await sql(`select cid, status, attempts, lease_until, claim_token from commands where account_id = $1 and cid = any($2) and status <> 'succeeded' limit 5`, [accountId, cids]);
      throw new Error(`only ${row!.n} of ${cids.length} commands ran within ${timeoutMs} ms; left, e.g.: ${JSON.stringify(left)}`);
    }
    await sleep(100);
  }
}

/** How many CommandResultEvents each _cid of the account produced: one per execution. */
async function resultEventsPerCid(sql: Sql, accountId: string) {
  const rows = await sql<{ cid: string; n: number }>(
    `select payload->>'_cid' as cid, count(*)::int as n from events where account_id = $1 and type = 'CommandResultEvent' group by 1`, [accountId]);
  return new Map(rows.map((r) => [r.cid, r.n]));
}

/** The events to be delivered to the account's endpoint: their ids, order ids and creation order. */
const deliveriesOf = (sql: Sql, accountId: string) => sql<{ id: string; event_id: string; order_id: string | null; status: string; claim_token: string | null; lease_until: Date | null }>(
  'select id, event_id, order_id, status, claim_token, lease_until from deliveries where account_id = $1 order by seq', [accountId]);

// Should the run end without the after hook (a crash), the processes and the server still go.
const leftovers = () => {
  for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  server?.destroySync();
};
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
});

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
      if (answer.status === 202) outcomes.push(await timed('result', `${client.base}/v3/commands/${cid}`, { token: brand.token }));
      outcomes.push(await timed('order', `${client.base}/v3/poll/job/*/${brand.orderIds[i % brand.orderIds.length]}`, { token: brand.token }));
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
  const load = [0, 1].map(integratorLoop).concat(probeLoop('readyz api', apiPort), probeLoop('readyz worker', workerPort));

  let stopping = 0, down = 0, starting = 0, up = 0, readyAgain = 0;
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
  assert.equal(unanswered.map((o) => `${o.what}: ${o.error}`), [], 'requests without an answer');
  const slowest = outcomes.reduce((a, b) => (b.ms > a.ms ? b : a));
  assert.ok(slowest.ms <= 6000, `the slowest answer took ${slowest.ms} ms (${slowest.what}, status ${slowest.status})`);

  // Answers: while the server is up, only successes. A request that failed for want of the database got a 503
  // SERVICE_UNAVAILABLE with Retry-After (the same request may be sent again), telling nothing of the failure (no
  // stack, no driver error), and only between the stop and the moment both processes were ready again.
  const failures = outcomes.filter((o) => o.status! >= 400 && !o.what.startsWith('readyz'));
  const outside = failures.filter((o) => o.startedAt + o.ms < stopping || o.startedAt > readyAgain);
  assert.equal(outside.map((o) => `${o.what} ${o.status}`), [], 'failures while the server was up');
  assertUnavailable(failures);
  // For the operators, each of those 503s is a warning that names its cause, not an error line.
  // (The output kept is its tail: its first line may be cut.)
  const said = api.output().split('\n').filter((l) => l.startsWith('{') && l.includes('the database cannot answer'));
  assert.ok(said.length > 0, 'the 503s were logged');
  assert.equal(said.filter((l) => !/"level":40/.test(l) || !/"cause":\{"type"/.test(l)).slice(0, 2), [], 'a warning with its cause');
  assert.not.match(api.output(), /"level":(50|60)/, `no error line for an outage:\n${errorsOf(api)}`);
  const accepted = [...sent].filter(([, s]) => s.status === 202).map(([cid]) => cid);
  const refused = [...sent].filter(([, s]) => s.status !== 202);
  assert.ok(failures.length > 0, 'some requests failed while the server was down (else the fault was not met)');
  assert.ok(accepted.length >= 20, `only ${accepted.length} commands were accepted`);
  assert.ok(outcomes.some((o) => o.what === 'command' && o.status === 202 && o.startedAt > readyAgain), 'commands were accepted again after the restart');

  // A command refused by the outage is sent again as an integrator would, with the same _cid and body: it is
  // accepted now (the first answer again, if it had been stored after all).
  for (const [cid, { body }] of refused) {
    const again = await timed('resend', `${client.base}/v3/commands`, { method: 'POST', body, token: brand.token });
    assert.is(again.status, 202, `resending ${cid}: ${again.status} ${again.body.slice(0, 200)}`);
  }
  // Every acknowledged command runs, exactly once; nothing else was stored.
  const all = [...sent.keys()];
  await untilExecuted(sql, brand.accountId, all, 20_000).catch((error: Error) => { throw new Error(`${error.message}\n${errorsOf(worker)}`); });
  const executions = await resultEventsPerCid(sql, brand.accountId);
  assert.equal(all.filter((cid) => executions.get(cid) !== 1).map((cid) => `${cid}: ${executions.get(cid) ?? 0}`), [], 'commands that ran twice or never');
  const [stored] = await sql<{ n: number }>('select count(*)::int as n from commands where account_id = $1', [brand.accountId]);
  assert.is(stored!.n, all.length, 'the commands stored are those sent');
  // And every event written for the brand reaches its endpoint (at least once), the stop notwithstanding.
  const events = (await deliveriesOf(sql, brand.accountId)).map((d) => d.event_id);
  assert.ok(events.length >= all.length * 2, `${events.length} deliveries for ${all.length} commands (an order event and a result each)`);
  await receiver.untilAll(events, 20_000, 'events of the brand').catch((error: Error) => { throw new Error(`${error.message}\n${errorsOf(worker)}`); });
  await Promise.all([api.stop(), worker.stop()]);
});

test('a receiver away for a while: every event written meanwhile arrives once it is back, within the retry schedule', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  // WEBHOOK_RETRY_SCHEDULE shortened as the other delivery tests do: ten retries 1 s apart, 10 s in all, which
  // outlasts the 3 s the receiver is away; the default (5 s, 5 m, …) would make this take minutes.
  const dataDir = tempDir();
  const svc = service('all', 'faults_receiver', dataDir, { WEBHOOK_RETRY_SCHEDULE: Array(10).fill('1s').join(','), WEBHOOK_TIMEOUT_MS: '2000' });
  const client = processClient(await svc.listening, ADMIN);
  const receiver = await restartableReceiver();
  const brand = await brandWithOrders(client, dataDir, 4, receiver.url());
  const sql = await sqlOn('faults_receiver');
  const before = (await deliveriesOf(sql, brand.accountId)).map((d) => d.event_id);
  await receiver.untilAll(before, 10_000, 'the events written while the receiver answered');

  await receiver.stop();
  const away = Date.now();
  // Events while it is away: each order changes three times (one OrderStatusEvent each), and commands add theirs.
  for (const status of ['appointment_confirmed', 'started', 'finished']) {
    for (const apiId of brand.orderIds) await client.admin('jobs.setStatus', { apiId, status });
  }
  const cids = brand.orderIds.map(() => randomUUID());
  for (const [i, cid] of cids.entries()) {
    const answer = await client.rest('/v3/commands', { method: 'POST', body: refreshOrder(cid, brand.orderIds[i]!), token: brand.token });
    assert.is(answer.status, 202);
  }
  await untilExecuted(sql, brand.accountId, cids, 10_000);
  await sleep(Math.max(0, away + 3000 - Date.now()));
  // The receiver was really away: attempts failed with a refused connection, and nothing arrived meanwhile.
  const [refusedTries] = await sql<{ n: number }>(
    `select count(*)::int as n from delivery_attempts a join deliveries d on d.id = a.delivery_id
     where d.account_id = $1 and a.status_code is null and a.error like '%ECONNREFUSED%'`, [brand.accountId]);
  assert.ok(refusedTries!.n > 0, 'attempts met a refused connection while the receiver was away');
  assert.ok(receiver.arrivals.every((a) => a.at < away), 'nothing arrived while the receiver was away');

  const written = await deliveriesOf(sql, brand.accountId);
  const meanwhile = written.map((d) => d.event_id).filter((id) => !before.includes(id));
  assert.is(meanwhile.length, brand.orderIds.length * 3 + cids.length * 2, 'three status events per order, and an order event and a result per command');
  assert.ok(written.every((d) => d.status !== 'failed'), 'no delivery gave up while the receiver was away');
  await receiver.start();
  const back = Date.now();
  // Each order's first pending delivery is retried within 1 s (the schedule's step); the events behind it follow at
  // once. 5 s leaves room for a slow machine.
  await receiver.untilAll(meanwhile, 5000, 'events written while the receiver was away');
  assert.ok(receiver.arrivals.filter((a) => meanwhile.includes(a.id)).every((a) => a.at >= back), 'they arrived after the receiver was back');
  // Each order's events arrive in the order they were written (CONTRACT §7).
  const firstArrival = new Map<string, number>();
  receiver.arrivals.forEach((a, i) => { if (!firstArrival.has(a.id)) firstArrival.set(a.id, i); });
  for (const orderId of brand.orderIds) {
    const ofOrder = written.filter((d) => d.order_id === orderId).map((d) => firstArrival.get(d.event_id)!);
    assert.equal(ofOrder, [...ofOrder].sort((a, b) => a - b), `order ${orderId}: its events arrived out of order`);
  }
  await sleep(300); // the last outcomes are recorded just after their answers
  const after = await deliveriesOf(sql, brand.accountId);
  assert.equal(after.filter((d) => d.status !== 'delivered').map((d) => `${d.event_id}: ${d.status}`), [], 'deliveries not recorded as delivered');
  await svc.stop();
});

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
    assert.ok(Date.now() < deadline, `the worker delivered only ${receiver.arrivals.length} events in 20 s\n${errorsOf(doomed)}`);
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
  await receiver.untilAll(events, 30_000, 'every event, after the kill').catch((error: Error) => { throw new Error(`${error.message}\n${errorsOf(successor)}`); });
  // The dead worker's claims were left alone until their lease ran out, then sent.
  for (const h of held) {
    const leaseEnd = h.lease_until!.getTime();
    const early = receiver.arrivals.filter((a) => a.id === h.event_id && a.at > killed && a.at < leaseEnd);
    assert.is(early.length, 0, `delivery ${h.id} was sent again ${leaseEnd - (early[0]?.at ?? leaseEnd)} ms before its lease ran out`);
  }
  // At least once; only what the dead worker may have sent without recording it (a claim it held) arrives twice.
  const counts = new Map<string, number>();
  for (const a of receiver.arrivals) counts.set(a.id, (counts.get(a.id) ?? 0) + 1);
  const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
  const heldEvents = new Set(held.map((h) => h.event_id));
  assert.equal(twice.filter((id) => !heldEvents.has(id)), [], 'events received twice that the dead worker did not hold');
  assert.ok([...counts.values()].every((n) => n <= 2), 'no event received more than twice');
  await sleep(300);
  const after = await deliveriesOf(sql, brand.accountId);
  assert.equal(after.filter((d) => d.status !== 'delivered' || d.claim_token !== null).map((d) => `${d.event_id}: ${d.status}`), [], 'deliveries left undelivered or claimed');
  await Promise.all([api.stop(), successor.stop()]);
});

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
    sent.push(postAlone(port, '/v3/commands', brand.token, refreshOrder(cid, brand.orderIds[i % brand.orderIds.length]!)).then((outcome) => {
      if ('status' in outcome && outcome.status === 202) acceptedSoFar++;
      return { cid, outcome };
    }));
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
  const others = outcomes.filter((o) => !('status' in o.outcome && o.outcome.status === 202)).map((o) => ('status' in o.outcome ? `status ${o.outcome.status}` : o.outcome.error));
  assert.ok(accepted.length >= 80, `only ${accepted.length} of ${outcomes.length} were accepted`);
  // A request the service took is answered; one that came after the close is refused or reset, never hung or failed.
  assert.equal([...new Set(others)].filter((e) => e !== 'ECONNREFUSED' && e !== 'ECONNRESET'), [], 'outcomes besides 202 and refused or reset connections');
  assert.match(first.output(), '"msg":"stopped"');
  assert.not.match(first.output(), /"msg":"request (aborted|errored)"/);
  assert.not.match(first.output(), /"level":(50|60)/, `no error logged while stopping:\n${errorsOf(first)}`);

  // Nothing is left claimed: the executor finished what it had claimed, the sender recorded its sends and gave
  // back what it had not sent.
  const claimedCommands = await sql(`select cid, status, lease_until from commands where account_id = $1 and claim_token is not null`, [brand.accountId]);
  assert.equal(claimedCommands, [], 'commands left claimed by the stopped process');
  const claimedDeliveries = (await deliveriesOf(sql, brand.accountId)).filter((d) => d.claim_token !== null);
  assert.equal(claimedDeliveries.map((d) => d.event_id), [], 'deliveries left claimed by the stopped process');

  const second = service('all', 'faults_sigterm', dataDir);
  await second.listening;
  await untilExecuted(sql, brand.accountId, accepted, 15_000).catch((error: Error) => { throw new Error(`${error.message}\n${errorsOf(second)}`); });
  const executions = await resultEventsPerCid(sql, brand.accountId);
  assert.equal(accepted.filter((cid) => executions.get(cid) !== 1).map((cid) => `${cid}: ${executions.get(cid) ?? 0}`), [], 'commands that ran twice or never');
  const events = (await deliveriesOf(sql, brand.accountId)).map((d) => d.event_id);
  await receiver.untilAll(events, 15_000, 'every event, after the restart').catch((error: Error) => { throw new Error(`${error.message}\n${errorsOf(second)}`); });
  await sleep(300);
  const after = await deliveriesOf(sql, brand.accountId);
  assert.equal(after.filter((d) => d.status !== 'delivered' || d.claim_token !== null).map((d) => `${d.event_id}: ${d.status}`), [], 'deliveries left undelivered or claimed');
  assert.is(await second.stop(), 0);
});

test.run();
