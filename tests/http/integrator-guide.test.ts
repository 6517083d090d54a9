import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import { allOrders, ApiProblem, commandOutcome, legacyOrders, logIn, order, requestRefreshToken, sendBrandCommand, sendPartnerCommand, type Session } from '../../examples/api-client.ts';
import { catchUp } from '../../examples/catch-up.ts';
import { rotateSignatureKey } from '../../examples/rotate-key.ts';
import { EVENT_TYPES, tryEveryEventType } from '../../examples/example-events.ts';
import { verifyWebhook } from '../../examples/verify-webhook.ts';
import { listening, uniqueEmail } from '../support/app.ts';
import { appWithMailbox, integrator, tokenMailedTo } from '../support/integrators.ts';
import { startReceiver } from '../support/receiver.ts';

// docs/integrators.md shows the files of examples/; this suite runs them against the real service.
const test = suite('the integrator guide\'s code runs as shown');
const root = join(import.meta.dirname, '..', '..');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;
let baseUrl: string;

test.before(async () => {
  app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '100ms' });
  app.worker.start();
  baseUrl = await listening(app);
});
test.after(() => app.worker.stop());

const configure = (accountId: string, url: string | null, signatureKey?: string) =>
  app.admin.call('webhookConfigs.upsert', { accountId, scope: 'brand', url, transformer: 'default', version: '1.3.0', ...(signatureKey && { signatureKey }) });
const createJob = async (brandId: string) => (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brandId })).apiId;

test('docs/integrators.md shows the example files exactly as they are', () => {
  const guide = readFileSync(join(root, 'docs', 'integrators.md'), 'utf8');
  const shown = [...guide.matchAll(/<!-- file: ([\w/.-]+) -->\n```ts\n([\s\S]*?)```/g)];
  assert.equal(shown.map((m) => m[1]), [
    'examples/api-client.ts', 'examples/first-steps.ts', 'examples/verify-webhook.ts', 'examples/rotate-key.ts', 'examples/catch-up.ts',
    'examples/example-events.ts', 'examples/endpoint-health.ts', 'examples/delivery-detail.ts',
  ]);
  for (const [, file, code] of shown) assert.fixture(code!, readFileSync(join(root, file!), 'utf8'), file);
});

test('verifyWebhook accepts real deliveries under both kinds of key, and refuses a changed body, a wrong key, a forged or missing signature, a late replay', async () => {
  const receiver = await startReceiver();
  const keys = [`whsec_${Buffer.from(randomUUID()).toString('base64')}`, 'a-plain-signing-key-0123456789', 'ein-schlüssel-mit-umlaut-0123456789'];
  for (const key of keys) {
    const brand = await integrator(app, 'brand');
    await configure(brand.accountId, receiver.url(`/${brand.accountId}`), key);
    const apiId = await createJob(brand.accountId);
    const [delivery] = (await receiver.until((r) => r.some((x) => x.payload.orderId === apiId))).filter((x) => x.payload.orderId === apiId);
    const { body, headers } = delivery!;
    assert.equal(verifyWebhook(body, headers, key), JSON.parse(body));
    assert.throws(() => verifyWebhook(body.replace('"new"', '"cancelled"'), headers, key), /No matching signature/);
    // (A character added to a whsec_ key may decode to the same bytes: another key is another key's bytes.)
    const wrong = key.startsWith('whsec_') ? `whsec_${Buffer.from(randomUUID()).toString('base64')}` : `${key}x`;
    assert.throws(() => verifyWebhook(body, headers, wrong), /No matching signature/);
    const forged = { ...headers, 'x-webhook-signature': createHmac('sha256', key).update(body).digest('hex'), 'webhook-signature': 'v1,AAAA' };
    assert.throws(() => verifyWebhook(body, forged, key), /No matching signature/);
    const stale = { ...headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 600) };
    assert.throws(() => verifyWebhook(body, stale, key), /timestamp/i, 'a replay ten minutes late is refused');
    const { 'webhook-signature': _, ...unsigned } = headers;
    assert.throws(() => verifyWebhook(body, unsigned, key), /webhook-signature/);
  }
});

test('rotateSignatureKey: during the window verifyWebhook accepts a delivery with the old key and with the new; without a key it fails with the 409', async () => {
  const receiver = await startReceiver();
  const brand = await integrator(app, 'brand');
  const oldKey = 'guide-old-signing-key-0123456789';
  const newKey = randomBytes(32).toString('base64url');
  await configure(brand.accountId, receiver.url(`/${brand.accountId}`), oldKey);
  const ends = await rotateSignatureKey(baseUrl, brand.accessToken, newKey, 3600);
  assert.ok(ends && Date.parse(ends) - Date.now() > 3_500_000, `the old key ends in an hour: ${ends}`);
  const apiId = await createJob(brand.accountId);
  const [delivery] = (await receiver.until((r) => r.some((x) => x.payload.orderId === apiId))).filter((x) => x.payload.orderId === apiId);
  assert.equal([verifyWebhook(delivery!.body, delivery!.headers, oldKey), verifyWebhook(delivery!.body, delivery!.headers, newKey)], [JSON.parse(delivery!.body), JSON.parse(delivery!.body)]);

  const keyless = await integrator(app, 'brand');
  await configure(keyless.accountId, null);
  await rotateSignatureKey(baseUrl, keyless.accessToken, newKey).then(() => assert.unreachable('rotated without a key'), (error: Error) => assert.match(error.message, /answered 409: .*CONFLICT/));
});

test('tryEveryEventType: the receiver gets and verifies one example of each type, marked webhook-test: 1; the outcomes say delivered', async () => {
  const receiver = await startReceiver();
  const brand = await integrator(app, 'brand');
  const key = 'guide-examples-key-0123456789';
  await configure(brand.accountId, receiver.url(`/${brand.accountId}`), key);
  const outcomes = await tryEveryEventType(baseUrl, brand.accessToken);
  assert.equal(Object.keys(outcomes), [...EVENT_TYPES]);
  assert.ok(Object.values(outcomes).every((o) => o.delivered && o.statusCode === 200), JSON.stringify(outcomes));
  assert.equal(receiver.received.map((r) => [verifyWebhook(r.body, r.headers, key)._type, r.headers['webhook-test']]), EVENT_TYPES.map((t) => [t, '1']));
  await tryEveryEventType(baseUrl, brand.accessToken); // tests 6 to 10 of the minute
  await tryEveryEventType(baseUrl, brand.accessToken).then(() => assert.unreachable('more than 10 tests a minute'), (error: Error) => assert.match(error.message, /answered 429/));
});

test('catchUp after an outage: every event the endpoint missed, in order, then only what is new', async () => {
  let down = true;
  const receiver = await startReceiver(() => (down ? 503 : 200));
  const brand = await integrator(app, 'brand');
  await configure(brand.accountId, receiver.url('/brand'));
  const orders = [await createJob(brand.accountId), await createJob(brand.accountId)];
  for (const apiId of orders) await app.admin.call('jobs.setStatus', { apiId, status: 'open' });

  const handled: Record<string, unknown>[] = [];
  const cursor = await catchUp(baseUrl, brand.accessToken, null, async (event) => { handled.push(event); });
  assert.equal(handled.map((e) => [e.orderId, e.status]), [[orders[0], 'new'], [orders[1], 'new'], [orders[0], 'open'], [orders[1], 'open']]);
  assert.ok(cursor);
  down = false;

  await app.admin.call('jobs.setStatus', { apiId: orders[1], status: 'accepted' });
  const more: Record<string, unknown>[] = [];
  const later = await catchUp(baseUrl, brand.accessToken, cursor, async (event) => { more.push(event); });
  assert.equal(more.map((e) => [e.orderId, e.status]), [[orders[1], 'accepted']]);
  assert.is.not(later, cursor);
  assert.equal(await catchUp(baseUrl, brand.accessToken, later, async () => { throw new Error('nothing new to handle'); }), later);
});

const problem = async (promise: Promise<unknown>): Promise<ApiProblem> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiProblem) return error;
    throw error;
  }
  throw new Error('no ApiProblem');
};

test('the client logs in with a mailed refresh token, and a wrong token is an ApiProblem 401', async () => {
  const accountId = (await app.admin.call<{ id: string }>('accounts.create', { name: 'Guide brand', role: 'brand' })).id;
  const email = uniqueEmail('guide');
  await app.admin.call('contacts.create', { accountId, email });
  await requestRefreshToken(baseUrl, email);
  await app.drainDeferred();
  const session = await logIn(baseUrl, tokenMailedTo(app.mailbox, email), 120);
  const apiId = await createJob(accountId);
  assert.equal([(await order(session, apiId)).orderId, (await order(session, apiId)).status], [apiId, 'new']);
  const refused = await problem(logIn(baseUrl, session.accessToken)); // an access token buys no access token
  assert.equal([refused.status, refused.code], [401, 'UNAUTHORIZED']);
  assert.equal([(await problem(order(session, 'no-such-order'))).status, (await problem(order(session, 'no-such-order'))).code], [404, 'NOT_FOUND']);
});

test('the client walks both partner listings page by page, and filters by updatedSince', async () => {
  const brand = await integrator(app, 'brand');
  const partner = await integrator(app, 'partner');
  await app.admin.call('webhookConfigs.upsert', { accountId: partner.accountId, scope: 'partner', url: null, transformer: 'partner-format', version: '1.3.0' });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push((await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId, partnerId: partner.accountId, updatedAt: `2026-01-0${i + 1}T00:00:00.000Z` })).apiId);
  }
  const session: Session = { baseUrl, accessToken: partner.accessToken };
  const walked = [];
  for await (const o of allOrders(session, { pageSize: 2 })) walked.push(o.jobApiId);
  assert.equal(walked, [...ids].reverse(), 'every order once, newest first, over three pages');
  const since = [];
  for await (const o of allOrders(session, { updatedSince: '2026-01-04T00:00:00.000Z' })) since.push(o.jobApiId);
  assert.equal(since, [ids[4], ids[3]], 'updatedSince is inclusive');
  assert.equal((await legacyOrders(session, { limit: 2, offset: 1 })).map((o) => o.jobApiId), [ids[3], ids[2]]);
  assert.equal((await legacyOrders(session)).length, 5);
  const brandSession: Session = { baseUrl, accessToken: brand.accessToken };
  assert.equal((await problem(legacyOrders(brandSession))).status, 401, 'the listings are the partners\'');
});

test('the client sends commands of both kinds and reads their outcomes; a used _cid with another body is 409, a bad body 400 with issues', async () => {
  const brand = await integrator(app, 'brand');
  const partner = await integrator(app, 'partner');
  const key = 'guide-partner-signing-key';
  await app.admin.call('webhookConfigs.upsert', { accountId: partner.accountId, scope: 'partner', url: null, transformer: 'partner-format', version: '1.3.0', signatureKey: key });
  const apiId = (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId, partnerId: partner.accountId, status: 'accepted' })).apiId;
  const brandSession: Session = { baseUrl, accessToken: brand.accessToken };
  const partnerSession: Session = { baseUrl, accessToken: partner.accessToken };

  const cid = randomUUID();
  const command = { _v: '1.0.0', _cid: cid, _type: 'UpdateOrderExternalId', orderId: apiId, externalId: 'guide-ref' };
  assert.equal(await sendBrandCommand(brandSession, command), { _cid: cid, _type: 'UpdateOrderExternalId', status: 'accepted' });
  assert.equal(await sendBrandCommand(brandSession, { ...command }), { _cid: cid, _type: 'UpdateOrderExternalId', status: 'accepted' }, 'a resend is answered alike');
  const outcome = await commandOutcome(brandSession, cid, 10_000);
  assert.equal([outcome._type, outcome._type === 'CommandResultEvent' && outcome.result], ['CommandResultEvent', { orderId: apiId }]);
  assert.equal((await problem(sendBrandCommand(brandSession, { ...command, externalId: 'other' }))).code, 'CONFLICT');
  const missing = randomUUID();
  await sendBrandCommand(brandSession, { _v: '1.0.0', _cid: missing, _type: 'RefreshOrder', orderId: 'no-such-order' });
  const failed = await commandOutcome(brandSession, missing, 10_000);
  assert.equal([failed._type, failed._type === 'CommandErrorEvent' && failed.code], ['CommandErrorEvent', 'ORDER_NOT_FOUND']);
  const bad = await problem(sendBrandCommand(brandSession, { _v: '1.0.0', _cid: randomUUID(), _type: 'UpdateOrderExternalId', orderId: apiId }));
  assert.equal([bad.status, bad.code, bad.issues.map((i) => i.path)], [400, 'BAD_REQUEST', ['externalId']]);

  const appointment = { _v: '1.0.0', _cid: randomUUID(), _type: 'SetJobAppointment', jobApiId: apiId, appointmentStart: '2026-12-01T09:00:00Z', appointmentEnd: '2026-12-01T11:00:00Z' };
  assert.equal((await problem(sendPartnerCommand(partnerSession, 'appointment', appointment, 'a-wrong-key'))).status, 401);
  const done = await sendPartnerCommand(partnerSession, 'appointment', appointment, key);
  assert.equal([done.status, done.order.status, done.order.appointmentStart], ['succeeded', 'appointment_confirmed', '2026-12-01T09:00:00.000Z']);
  const result = await commandOutcome(partnerSession, appointment._cid, 1000);
  assert.equal([result._type, result._cid], ['CommandResultEvent', appointment._cid]);
});

/** A server answering each request with the next of `answers` (the last one again when they run out). */
async function scripted(answers: { status: number; headers?: Record<string, string>; body?: string }[]) {
  const seen: { method: string; path: string; at: number }[] = [];
  const server = http.createServer((req, res) => {
    const answer = answers[Math.min(seen.length, answers.length - 1)]!;
    seen.push({ method: req.method!, path: req.url!, at: Date.now() });
    req.resume().on('end', () => res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body ?? '{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen, close: () => new Promise((resolve) => server.close(resolve)) };
}

test('the client waits Retry-After after a 429, retries a safe request after a 5xx, and never repeats an unsafe one', async () => {
  const limited = await scripted([{ status: 429, headers: { 'retry-after': '1' }, body: '{"code":"TOO_MANY_REQUESTS"}' }, { status: 200, body: '{"access_token":"t"}' }]);
  try {
    const started = Date.now();
    assert.equal(await logIn(limited.url, 'refresh'), { baseUrl: limited.url, accessToken: 't' });
    assert.is(limited.seen.length, 2);
    assert.ok(limited.seen[1]!.at - started >= 950, 'waited the second Retry-After asked for');
  } finally { await limited.close(); }

  const failing = await scripted([{ status: 502 }, { status: 500 }, { status: 200, body: '[]' }]);
  try {
    assert.equal(await legacyOrders({ baseUrl: `${failing.url}/behind/a/gateway`, accessToken: 't' }, { limit: 5, offset: undefined }), []);
    assert.is(failing.seen.length, 3, 'a GET is tried again after 5xx');
    assert.equal(failing.seen.map((r) => r.path), Array(3).fill('/behind/a/gateway/v3/partner-orders?limit=5'), 'the base URL\'s path is kept; an undefined member is left out');
  } finally { await failing.close(); }

  const broken = await scripted([{ status: 500, body: '{"code":"INTERNAL_SERVER_ERROR","detail":"An unexpected error occurred.","requestId":"r-1"}' }]);
  try {
    const refused = await problem(requestRefreshToken(broken.url, 'someone@example.com'));
    assert.equal([refused.status, refused.code, refused.requestId, broken.seen.length], [500, 'INTERNAL_SERVER_ERROR', 'r-1', 1], 'a login is not repeated after a 5xx');
  } finally { await broken.close(); }
});

test.run();
