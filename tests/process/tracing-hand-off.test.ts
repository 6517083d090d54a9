import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startOtlpReceiver } from '../support/otlp-receiver.ts';
import { integratorLoggedIn, processClient, type ServiceProcess, startService } from '../support/process.ts';

// CONTRACT §13 with no context manager: each kind of work that writes events (or sends at once) inside a request is
// handed the request's trace by hand. Each is checked here by what a receiver gets: the webhook's traceparent carries
// the trace of the request that caused it.
const test = suite('a traced request hands its trace to what it writes');
const ADMIN = 'tracing-hand-off-admin-token';

let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let service: ServiceProcess;
let client: ReturnType<typeof processClient>;
let brand: { accountId: string; token: string };
let dataDir = '';
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => {
    body += chunk;
  });
  req.on('end', () => {
    received.push({ headers: req.headers, body });
    res.end();
  });
});

const newTrace = () => randomBytes(16).toString('hex');
const traceparent = (traceId: string) => `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
/** The trace ids of the webhooks whose body holds `text`, once `count` of them have come. */
async function tracesOfWebhooks(text: string, count: number): Promise<string[]> {
  const matching = () => received.filter((r) => r.body.includes(text));
  for (const deadline = Date.now() + 15_000; matching().length < count; await new Promise((r) => setTimeout(r, 50)))
    assert.ok(Date.now() < deadline, `${matching().length} of ${count} webhooks with ${text}`);
  return matching().map((r) => String(r.headers.traceparent).split('-')[1] ?? 'none');
}

/** A query of the typed RPC face (a GET, its input in the URL). */
async function adminQuery<T>(name: string, input: unknown): Promise<T> {
  const res = await fetch(`${client.base}/trpc/admin.${name}?input=${encodeURIComponent(JSON.stringify(input))}`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  assert.is(res.status, 200, await res.clone().text());
  return ((await res.json()) as { result: { data: T } }).result.data;
}

test.before(async () => {
  otlp = await startOtlpReceiver();
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  dataDir = mkdtempSync(join(tmpdir(), 'pbi-tracing-hand-off-'));
  service = startService({
    PGLITE_DIR: 'memory://',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: ADMIN,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  });
  client = processClient(await service.listening, ADMIN);
  brand = await integratorLoggedIn(client, dataDir, 'brand', 'hand-off-brand@example.com');
  await client.admin('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
    transformer: 'default',
    version: '1.3.0',
  });
});

test.after(async () => {
  await service.stop('SIGKILL');
  await otlp.close();
  receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('a /trpc batch: each call writes in its own unit of work, in the trace of the request', async () => {
  const traceId = newTrace();
  const [a, b] = [`batch-a-${randomUUID()}`, `batch-b-${randomUUID()}`];
  const res = await fetch(`${client.base}/trpc/admin.jobs.create,admin.jobs.create?batch=1`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${ADMIN}`,
      traceparent: traceparent(traceId),
    },
    body: JSON.stringify({
      0: { brandAccountId: brand.accountId, apiId: a },
      1: { brandAccountId: brand.accountId, apiId: b },
    }),
  });
  assert.is(res.status, 200, await res.clone().text());
  assert.equal(await tracesOfWebhooks(a, 1), [traceId]);
  assert.equal(await tracesOfWebhooks(b, 1), [traceId]);
  // What the console's delivery page shows: the traceparent each attempt's request carried.
  const { items } = await adminQuery<{ items: { id: string; orderId: string }[] }>('deliveries.list', {
    accountId: brand.accountId,
  });
  type Detail = { attempts: { request: { headers: Record<string, string> } }[] };
  const detail = () => adminQuery<Detail>('deliveries.get', { deliveryId: items.find((d) => d.orderId === a)!.id });
  // The attempt is recorded after it was sent (the receiver may have it first).
  let delivery = await detail();
  for (const deadline = Date.now() + 10_000; delivery.attempts.length === 0; delivery = await detail())
    assert.ok(Date.now() < deadline, 'the attempt was not recorded');
  assert.match(delivery.attempts[0]!.request.headers.traceparent ?? '', `00-${traceId}-`);
});

test("a partner command, run in the API process: its events carry the partner's request's trace", async () => {
  const key = `hand-off-signature-key-${randomUUID()}`;
  const partner = await integratorLoggedIn(client, dataDir, 'partner', 'hand-off-partner@example.com');
  await client.admin('webhookConfigs.upsert', {
    accountId: partner.accountId,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.3.0',
    signatureKey: key,
  });
  const apiId = `appointment-${randomUUID()}`;
  await client.admin('jobs.create', { brandAccountId: brand.accountId, partnerId: partner.accountId, apiId });
  await tracesOfWebhooks(apiId, 1); // the order's creation
  const traceId = newTrace();
  const body = JSON.stringify({
    _v: '1.0.0',
    _cid: randomUUID(),
    _type: 'SetJobAppointment',
    jobApiId: apiId,
    appointmentStart: '2027-01-05T09:00:00+01:00',
    appointmentEnd: '2027-01-05T11:00:00+01:00',
  });
  const res = await client.rest('/v3/commands/partner/appointment', {
    method: 'POST',
    token: partner.token,
    headers: {
      traceparent: traceparent(traceId),
      'x-webhook-signature': createHmac('sha256', key).update(body).digest('hex'),
    },
    body,
  });
  assert.is(res.status, 200, await res.clone().text());
  const traces = await tracesOfWebhooks(apiId, 2);
  assert.is(traces[1], traceId, "the brand's webhook of the appointment");
});

test("an endpoint test: the example carries the test request's trace", async () => {
  const traceId = newTrace();
  const res = await client.rest('/v3/webhook-config/test', {
    method: 'POST',
    token: brand.token,
    headers: { traceparent: traceparent(traceId) },
    body: '{}',
  });
  assert.is(res.status, 200, await res.clone().text());
  const example = [...received].reverse().find((r) => r.headers['webhook-test'] === '1');
  assert.ok(example, 'no example came');
  assert.is(String(example!.headers.traceparent).split('-')[1], traceId);
});

test.run();
