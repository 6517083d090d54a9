import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { attribute, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { integratorLoggedIn, processClient, type ServiceProcess, startService } from '../support/process.ts';
import { type Received, startReceiver } from '../support/receiver.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// CONTRACT §13 across processes: one brand command's trace, from the POST to the webhook its result makes, through
// the command and the event stored in between. On the embedded database in one process; on PostgreSQL on a cluster
// start, where the API process that accepts the command is not the worker that runs and delivers it.
const test = suite('one trace from a request to its webhook, across processes (CONTRACT §13)');
const ADMIN = 'tracing-admin-token-0123456789';
const SPAN_KIND = { client: 3, consumer: 5 } as const;

let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
const started: ServiceProcess[] = [];
const dirs: string[] = [];
const databases: string[] = [];

test.before(async () => {
  otlp = await startOtlpReceiver();
});
test.after(async () => {
  for (const p of started) await p.stop('SIGKILL');
  await otlp.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  if (databases.length > 0) {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    for (const name of databases) await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
});

/** Sends one traced brand command to a service started with these settings; follows it to its webhook's receipt. */
async function traceOneCommand(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'pbi-trace-across-'));
  dirs.push(dataDir);
  const service = startService({
    DATA_DIR: dataDir,
    ADMIN_TOKEN: ADMIN,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    ...env,
  });
  started.push(service);
  const receiver = await startReceiver();
  const client = processClient(await service.listening, ADMIN);
  const marker = `marker${randomBytes(6).toString('hex')}`;
  const brand = await integratorLoggedIn(client, dataDir, 'brand', `${marker}@example.com`);
  await client.admin('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: receiver.url(`/hooks/${marker}`),
    transformer: 'default',
    version: '1.3.0',
  });
  const { apiId } = await client.admin<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });

  const traceId = randomBytes(16).toString('hex');
  const cid = randomUUID();
  const sent = await client.rest('/v3/commands', {
    method: 'POST',
    token: brand.token,
    headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    body: JSON.stringify({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: apiId }),
  });
  assert.is(sent.status, 202);
  const isResult = (r: Received) => r.payload._type === 'CommandResultEvent' && r.payload._cid === cid;
  await receiver.until((received) => received.some(isResult), 15_000, 'the command result webhook');
  const webhook = receiver.received.find(isResult)!;

  const request = await otlp.spanNamed('POST /v3/commands', (s) => s.traceId === traceId);
  const execution = await otlp.spanNamed('command RefreshOrder', (s) => s.traceId === traceId);
  const traceparent = String(webhook.headers.traceparent);
  const [, headerTrace, headerSpan] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(traceparent) ?? [];
  assert.is(headerTrace, traceId, `the webhook carries the trace: ${traceparent}`);
  const attempt = await otlp.spanNamed('POST webhook', (s) => s.spanId === headerSpan);
  return { request, execution, attempt, marker, brand, cid };
}

function assertOneTrace({
  request,
  execution,
  attempt,
  marker,
  brand,
  cid,
}: Awaited<ReturnType<typeof traceOneCommand>>) {
  assert.is(execution.parentSpanId, request.spanId, "the execution continues the request's span");
  assert.is(execution.kind, SPAN_KIND.consumer);
  assert.is(attempt.traceId, request.traceId);
  assert.is(attempt.parentSpanId, execution.spanId, 'the attempt continues the work that wrote its event');
  assert.is(attempt.kind, SPAN_KIND.client);
  assert.is(attribute(attempt, 'http.response.status_code'), 200);
  assert.is(attribute(attempt, 'http.request.method'), 'POST');
  const everything = otlp.bodies.join('\n');
  for (const secret of [marker, brand.token, ADMIN, cid]) assert.not.ok(everything.includes(secret), 'a private value');
}

test('embedded, one process: request, execution and attempt, one trace; the webhook carries the attempt', async () => {
  const traced = await traceOneCommand({ PGLITE_DIR: 'memory://' });
  assertOneTrace(traced);
});

test('a cluster on PostgreSQL: accepted by an API process, run and delivered by the worker, one trace', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL): a cluster start')) return;
  const name = `pbi_trace_${process.pid}_${Date.now()}`;
  databases.push(name);
  const url = Object.assign(new URL(process.env.DATABASE_URL!), { pathname: `/${name}` }).href;
  const traced = await traceOneCommand({ DATABASE_URL: url, WEB_CONCURRENCY: '2', DATABASE_POOL_SIZE: '3' });
  assertOneTrace(traced);
  assert.match(traced.request.instance, /^api-.+-\d+$/, 'the request was an API process');
  assert.match(traced.execution.instance, /^worker-.+-\d+$/, 'the execution, the worker');
  assert.is(traced.attempt.instance, traced.execution.instance);
});

test("two requests' commands run in one batch by a later worker: each event keeps its request's trace", async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL): an API process and a worker of their own')) return;
  const name = `pbi_trace_batch_${process.pid}_${Date.now()}`;
  databases.push(name);
  const url = Object.assign(new URL(process.env.DATABASE_URL!), { pathname: `/${name}` }).href;
  const dataDir = mkdtempSync(join(tmpdir(), 'pbi-trace-batch-'));
  dirs.push(dataDir);
  const env = {
    DATABASE_URL: url,
    DATA_DIR: dataDir,
    ADMIN_TOKEN: ADMIN,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
  };
  const api = startService({ ...env, SERVICE_ROLE: 'api' });
  started.push(api);
  const receiver = await startReceiver();
  const client = processClient(await api.listening, ADMIN);
  const brand = await integratorLoggedIn(client, dataDir, 'brand', 'batch-traces@example.com');
  await client.admin('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: receiver.url('/hooks/batch'),
    transformer: 'default',
    version: '1.3.0',
  });
  const { apiId } = await client.admin<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
  const sent = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')].map((traceId) => ({
    traceId,
    cid: randomUUID(),
  }));
  for (const { traceId, cid } of sent) {
    const accepted = await client.rest('/v3/commands', {
      method: 'POST',
      token: brand.token,
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
      body: JSON.stringify({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: apiId }),
    });
    assert.is(accepted.status, 202);
  }
  // Both wait for a worker; the one started now claims them together and runs them in one transaction.
  started.push(startService({ ...env, SERVICE_ROLE: 'worker' }));
  const resultOf = (cid: string) => (r: Received) => r.payload._type === 'CommandResultEvent' && r.payload._cid === cid;
  await receiver.until((got) => sent.every(({ cid }) => got.some(resultOf(cid))), 30_000, 'both results');

  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const { rows } = await db.query<{ cid: string; xmin: string; traceparent: string }>(
    `select payload->>'_cid' as cid, xmin::text, traceparent from events where type = 'CommandResultEvent'`,
  );
  await db.end();
  assert.is(rows.length, 2);
  // The case under test; should it not hold, look for the worker's "a batch of commands was undone" line.
  assert.is(rows[0]!.xmin, rows[1]!.xmin, 'both results were written by one transaction (one batch)');
  for (const { traceId, cid } of sent) {
    const request = await otlp.spanNamed('POST /v3/commands', (s) => s.traceId === traceId);
    const execution = await otlp.spanNamed('command RefreshOrder', (s) => s.traceId === traceId);
    assert.is(execution.parentSpanId, request.spanId, "each command's span continues its own request");
    const event = rows.find((row) => row.cid === cid)!;
    assert.match(event.traceparent, new RegExp(`^00-${traceId}-${execution.spanId}-01$`), 'its event, its command');
    const webhook = receiver.received.find(resultOf(cid))!;
    assert.match(String(webhook.headers.traceparent), new RegExp(`^00-${traceId}-`), 'its webhook, its trace');
  }
});

test.run();
