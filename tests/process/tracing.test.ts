import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { attribute, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { integratorLoggedIn, processClient, type ServiceProcess, startService } from '../support/process.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';
import { freePort } from '../support/temp-postgres.ts';

// CONTRACT §13 from outside: the service started with OpenTelemetry's settings exports its spans over OTLP/HTTP (JSON
// here) to a receiver in this process, which keeps every body it gets.
const test = suite('traces over OTLP (CONTRACT §13)');
const ADMIN = 'tracing-admin-token-0123456789';
const SERVER_SPAN = 2; // OTLP's SPAN_KIND_SERVER

let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let endpoint = '';
const dirs: string[] = [];
const databases: string[] = [];
const started: ServiceProcess[] = [];
const spans = () => otlp.spans();
const spanNamed = (name: string) => otlp.spanNamed(name);

test.before(async () => {
  otlp = await startOtlpReceiver();
  endpoint = otlp.endpoint;
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

test('request spans: named by method and route, parented by traceparent, with nothing private in them', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pbi-tracing-'));
  dirs.push(dataDir);
  const service = startService({
    PGLITE_DIR: 'memory://',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: ADMIN,
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    LOG_FORMAT: 'json',
  });
  started.push(service);
  const client = processClient(await service.listening, ADMIN);
  const marker = `marker${randomBytes(6).toString('hex')}`;
  const brand = await integratorLoggedIn(client, dataDir, 'brand', `${marker}@example.com`);
  const { apiId } = await client.admin<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });

  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  const sent = await client.rest('/v3/commands', {
    method: 'POST',
    token: brand.token,
    headers: { traceparent: `00-${traceId}-${parentId}-01` },
    body: JSON.stringify({ _v: '1.0.0', _cid: randomUUID(), _type: 'RefreshOrder', orderId: apiId, note: marker }),
  });
  assert.ok([202, 400].includes(sent.status), String(sent.status));
  const polled = await client.rest(`/v3/poll/job/1.3.0/${apiId}`, { token: brand.token });
  assert.is(polled.status, 200);

  const command = await spanNamed('POST /v3/commands');
  assert.is(command.traceId, traceId, 'the incoming traceparent is its parent');
  assert.is(command.parentSpanId, parentId);
  assert.is(command.service, 'partner-brand-integration-api');
  assert.is(attribute(command, 'http.request.method'), 'POST');
  assert.is(attribute(command, 'http.route'), '/v3/commands');
  assert.is(attribute(command, 'http.response.status_code'), sent.status);
  const poll = await spanNamed('GET /v3/poll/job/{version}/{orderId}');
  assert.is(attribute(poll, 'http.response.status_code'), 200);
  assert.not.ok(poll.parentSpanId, 'a request without traceparent starts a trace');
  await spanNamed('POST admin.jobs.create');
  assert.is((await client.rest(`/v3/nowhere/${marker}`, { token: brand.token })).status, 404);
  const unmatched = await spanNamed('GET unmatched');
  assert.is(attribute(unmatched, 'http.route'), undefined, 'no route for a path that matched none');
  assert.is(attribute(unmatched, 'http.response.status_code'), 404);

  // Nothing private: no token, e-mail address, payload or body reached the collector.
  const everything = otlp.bodies.join('\n');
  for (const secret of [marker, brand.token, ADMIN]) assert.not.ok(everything.includes(secret), 'a private value');
  // Log lines written inside a span carry its ids (the log is written out in blocks: wait for it).
  const traced = () =>
    service
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{') && l.includes('"path":"/v3/commands"') && l.includes(`"trace_id":"${traceId}"`));
  for (const deadline = Date.now() + 5000; traced().length === 0; await new Promise((r) => setTimeout(r, 50)))
    assert.ok(
      Date.now() < deadline,
      `no log line of the traced request with its trace id:\n${service.output().slice(-2000)}`,
    );
  const lines = traced();
  assert.match(lines[0]!, `"span_id":"${command.spanId}"`, "the request's own span");
  // Each request's lines carry its own ids.
  const pollLine = () =>
    service
      .output()
      .split('\n')
      .find((l) => l.includes(`"path":"/v3/poll/job/1.3.0/${apiId}"`));
  for (const deadline = Date.now() + 5000; !pollLine(); await new Promise((r) => setTimeout(r, 50)))
    assert.ok(Date.now() < deadline, 'no log line of the poll');
  assert.match(pollLine()!, `"trace_id":"${poll.traceId}"`);
});

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const traceparent = (traceId: string) => `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
/** The server span of each of these traces (one request each), once all are exported. */
async function serverSpansOf(traceIds: string[]) {
  const spanOf = (traceId: string) => spans().find((s) => s.traceId === traceId && s.kind === SERVER_SPAN);
  for (const deadline = Date.now() + 10_000; traceIds.some((id) => !spanOf(id)); await wait(50))
    assert.ok(Date.now() < deadline, `${traceIds.filter((id) => !spanOf(id)).length} of ${traceIds.length} unseen`);
  return traceIds.map((id) => spanOf(id)!);
}

test('the 503s of a process still starting have spans, named by the method: no route is known yet', async () => {
  const port = await freePort();
  const service = startService({
    PGLITE_DIR: 'memory://',
    ADMIN_TOKEN: ADMIN,
    PORT: String(port),
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  started.push(service);
  const starting: string[] = [];
  for (let answered = 0, deadline = Date.now() + 30_000; answered !== 401; await wait(5)) {
    assert.ok(Date.now() < deadline, `no answer of the started service within 30 s:\n${service.output()}`);
    const traceId = randomBytes(16).toString('hex');
    answered = await fetch(`http://127.0.0.1:${port}/v3/poll/job/1.3.0/an-order`, {
      headers: { traceparent: traceparent(traceId) },
    }).then(
      (r) => r.status,
      () => 0, // not bound yet
    );
    if (answered === 503) starting.push(traceId);
  }
  assert.ok(starting.length >= 1, 'answered while starting');
  for (const span of await serverSpansOf(starting)) {
    assert.is(span.name, 'GET');
    assert.is(attribute(span, 'http.response.status_code'), 503);
    assert.is(attribute(span, 'http.route'), undefined, 'no route is known yet');
  }
});

test('the 429s of the fair-use door, answered before express, have spans named by their route', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL): the door refuses a share counted on the server')) return;
  const name = `pbi_trace_door_${process.pid}_${Date.now()}`;
  databases.push(name);
  const dataDir = mkdtempSync(join(tmpdir(), 'pbi-tracing-'));
  dirs.push(dataDir);
  const service = startService({
    DATABASE_URL: Object.assign(new URL(process.env.DATABASE_URL!), { pathname: `/${name}` }).href,
    DATA_DIR: dataDir,
    ADMIN_TOKEN: ADMIN,
    API_RATE_LIMIT_PER_ACCOUNT: '3',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  started.push(service);
  const client = processClient(await service.listening, ADMIN);
  const brand = await integratorLoggedIn(client, dataDir, 'brand', 'door@example.com');
  const refused: string[] = [];
  for (let i = 0; i < 12; i++) {
    const traceId = randomBytes(16).toString('hex');
    const polled = await client.rest('/v3/poll/job/1.3.0/an-order', {
      token: brand.token,
      headers: { traceparent: traceparent(traceId) },
    });
    if (polled.status === 429) refused.push(traceId);
  }
  const metrics = await (await client.rest('/metrics', { token: ADMIN })).text();
  const atTheDoor = Number(
    /http_requests_total\{method="GET",route="fair use",status="429"\} (\d+)/.exec(metrics)?.[1],
  );
  assert.ok(atTheDoor >= 1 && atTheDoor <= refused.length, `the door answered ${atTheDoor} of ${refused.length}`);
  for (const span of await serverSpansOf(refused)) {
    assert.is(span.name, 'GET /v3/poll/job/{version}/{orderId}');
    assert.is(attribute(span, 'http.route'), '/v3/poll/job/{version}/{orderId}');
    assert.is(attribute(span, 'http.response.status_code'), 429);
  }
});

test('a stop sends the last spans out: exported on SIGTERM, long before the batch would have gone', async () => {
  const before = spans().length;
  const service = startService({
    PGLITE_DIR: 'memory://',
    ADMIN_TOKEN: ADMIN,
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '600000',
  });
  started.push(service);
  const client = processClient(await service.listening, ADMIN);
  await client.admin('accounts.create', { name: 'Last words', role: 'brand' });
  assert.is(await service.stop('SIGTERM'), 0);
  assert.ok(
    spans()
      .slice(before)
      .some((s) => s.name === 'POST admin.accounts.create'),
    'the span of the last request was exported at the stop',
  );
});

test('a collector that refuses every export is said in the log once, however often the exports fail', async () => {
  let refused = 0;
  const collector = createServer((req, res) => {
    refused += 1;
    req.resume().on('end', () => res.writeHead(400).end('no'));
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const service = startService({
    PGLITE_DIR: 'memory://',
    ADMIN_TOKEN: ADMIN,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    OTEL_BSP_SCHEDULE_DELAY: '50',
    LOG_FORMAT: 'json',
  });
  started.push(service);
  try {
    const client = processClient(await service.listening, ADMIN);
    for (let i = 0; refused < 3; i += 1) {
      assert.ok(i < 100, `the collector got ${refused} exports`);
      await client.admin('accounts.create', { name: `Refused ${i}`, role: 'brand' });
      await wait(100);
    }
    const said = () =>
      service
        .output()
        .split('\n')
        .filter((line) => line.includes('traces could not be exported'));
    await wait(1500); // each refusal answered, and the log written (it goes out each second)
    const [line = '', ...more] = said();
    assert.ok(line, `${refused} exports refused and not a line about them`);
    assert.is(more.length, 0, `${refused} refused, more than one line:\n${more.join('\n')}`);
    assert.is(JSON.parse(line).level, 40);
    assert.match(line, /"problem":"[^"]+"/);
    // A line of the process, written after traced requests: no request's ids leaked into the process's logger.
    assert.not.match(line, '"trace_id"');
    assert.is(await service.stop('SIGTERM'), 0);
  } finally {
    collector.close();
  }
});

test("a setting of OpenTelemetry's own that its SDK cannot use is said in the log, read before it began", async () => {
  const service = startService({
    PGLITE_DIR: 'memory://',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_TIMEOUT: '-5',
    LOG_FORMAT: 'json',
  });
  started.push(service);
  await service.listening;
  await wait(1200); // the log is written out each second
  const line = service
    .output()
    .split('\n')
    .find((l) => l.includes("OpenTelemetry's SDK reports a problem"));
  assert.match(line ?? 'none', 'OTEL_EXPORTER_OTLP_TIMEOUT is invalid');
  assert.is(await service.stop('SIGTERM'), 0);
});

test('with no OTLP endpoint set, nothing is exported and log lines carry no trace ids', async () => {
  const before = otlp.bodies.length;
  const service = startService({ PGLITE_DIR: 'memory://', ADMIN_TOKEN: ADMIN, LOG_FORMAT: 'json' });
  started.push(service);
  const client = processClient(await service.listening, ADMIN);
  await client.admin('accounts.create', { name: 'Untraced', role: 'brand' });
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.is(otlp.bodies.length, before);
  assert.not.match(service.output(), /"trace_id"/);
});

test.run();
