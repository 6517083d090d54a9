import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_ERROR_DETAILS } from '../../domain/command.ts';
import { MAX_EVENT_BYTES } from '../../domain/event.ts';
import { ADMIN_TOKEN } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { snapshot } from '../support/snapshot.ts';

// Every id the API types as a string names nothing when it has another shape than the store's ids: the path's
// not-found answer, never a database error (CONTRACT §3). And every stored event is bounded, whatever the input.
const test = suite('identifiers of any shape, and bounded events');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Who = Awaited<ReturnType<typeof integrator>>;
let app: App;
let brand: Who;
let jobApiId: string;
const SHAPES = [
  'not-a-uuid',
  '123',
  '00000000-0000-0000-0000-00000000000g',
  `${randomUUID()}x`,
  'x'.repeat(255),
  'x'.repeat(256),
  'x'.repeat(5000),
];

test.before(async () => {
  app = await appWithMailbox();
  app.worker.start();
  brand = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: null,
    transformer: 'default',
    version: '1.3.0',
  });
  jobApiId = (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId })).apiId;
});
test.after(() => app.worker.stop());

const send = (body: Record<string, unknown>) =>
  app.http.post('/v3/commands').set('authorization', `Bearer ${brand.accessToken}`).send(body);
async function outcome(cid: string): Promise<Record<string, any>> {
  for (
    const deadline = Date.now() + 10_000;
    Date.now() < deadline;
    await new Promise((resolve) => setTimeout(resolve, 20))
  ) {
    const res = await app.http
      .get(`/v3/commands/${encodeURIComponent(cid)}`)
      .set('authorization', `Bearer ${brand.accessToken}`);
    if (res.status === 200) return res.body;
    assert.is(res.status, 204, JSON.stringify(res.body));
  }
  throw new Error(`no result for ${cid}`);
}

test('RefreshInvoice with an invoiceId of another shape ends INVOICE_NOT_FOUND, not INTERNAL_ERROR', async () => {
  for (const invoiceId of SHAPES) {
    const cid = randomUUID();
    assert.is((await send({ _v: '1.0.0', _cid: cid, _type: 'RefreshInvoice', invoiceId })).status, 202);
    const result = await outcome(cid);
    assert.equal([result._type, result.code], ['CommandErrorEvent', 'INVOICE_NOT_FOUND'], invoiceId);
  }
});

test("delivery, command, account and contact ids of any shape are the path's 404, on REST and in the admin procedures", async () => {
  const before = await snapshot(app.database);
  const admin = (name: string, input: unknown) =>
    app.http
      .post(`/trpc/admin.${name}`)
      .set('authorization', `Bearer ${ADMIN_TOKEN}`)
      .send(input as object);
  for (const id of SHAPES) {
    const rest = await app.http
      .post(`/v3/webhook-deliveries/${encodeURIComponent(id)}/redeliver`)
      .set('authorization', `Bearer ${brand.accessToken}`)
      .send({});
    assert.equal([rest.status, rest.body.code], [404, 'NOT_FOUND'], `redeliver ${id}`);
    const command = await app.http
      .get(`/v3/commands/${encodeURIComponent(id)}`)
      .set('authorization', `Bearer ${brand.accessToken}`);
    assert.is(command.status, 404, `command ${id}`);
    for (const [name, input] of [
      ['deliveries.redeliver', { deliveryId: id }],
      ['contacts.create', { accountId: id, email: `shape-${randomUUID().slice(0, 8)}@example.com` }],
      ['contacts.setApiAccess', { contactId: id, apiAccess: false }],
      ['accounts.create', { name: 'child', role: 'partner', parentId: id }],
      ['jobs.create', { brandAccountId: id }],
      ['jobs.assign', { apiId: jobApiId, partnerId: id }],
      ['webhookConfigs.upsert', { accountId: id, scope: 'brand', transformer: 'default', version: '1.3.0' }],
      ['orderMappings.upsert', { brandAccountId: id, fields: [{ key: 'k', target: 'externalId' }] }],
      ['deliveries.redeliverFailed', { accountId: id, since: '2026-01-01T00:00:00Z' }],
    ] as const) {
      // Answered exactly as an id of the store's shape that names nothing (mostly 404; a master account named by
      // `parentId` is a 400 issue of that member; redelivering an unknown account's failures counts 0).
      const res = await admin(name, input);
      const unknown = await admin(
        name,
        JSON.parse(JSON.stringify(input).replaceAll(JSON.stringify(id), JSON.stringify(randomUUID()))),
      );
      const answer = (r: typeof res) => [
        r.status,
        r.body.error?.data.code ?? null,
        r.body.error?.message ?? null,
        r.body.result?.data ?? null,
      ];
      assert.ok(res.status < 500, `admin.${name} with ${id}: ${JSON.stringify(res.body)}`);
      assert.equal(answer(res), answer(unknown), `admin.${name} with ${id}`);
    }
    const listed = await app.admin.query<{ items: unknown[] }>('deliveries.list', { accountId: id });
    assert.equal(listed.items, [], `deliveries of ${id}: none, not everyone's`);
    const looked = await app.http
      .get(`/trpc/admin.commands.get?input=${encodeURIComponent(JSON.stringify({ accountId: id, cid: 'c' }))}`)
      .set('authorization', `Bearer ${ADMIN_TOKEN}`);
    assert.is(looked.status, 404, `admin.commands.get with ${id}`);
  }
  assert.equal(await snapshot(app.database), before, 'nothing changed');
});

test('an id with a character before a uuid (x<uuid>) names nothing: GET of a delivery and admin deliveries.get are 404, not 500', async () => {
  // SHAPES has a uuid with a character after it; this one has it before, which only the pattern's start anchor refuses.
  const id = `x${randomUUID()}`;
  const rest = await app.http.get(`/v3/webhook-deliveries/${id}`).set('authorization', `Bearer ${brand.accessToken}`);
  assert.equal([rest.status, rest.body.code], [404, 'NOT_FOUND'], JSON.stringify(rest.body));
  const admin = await app.http
    .get(`/trpc/admin.deliveries.get?input=${encodeURIComponent(JSON.stringify({ deliveryId: id }))}`)
    .set('authorization', `Bearer ${ADMIN_TOKEN}`);
  assert.equal([admin.status, admin.body.error?.data.code], [404, 'NOT_FOUND'], JSON.stringify(admin.body));
});

test('a CommandErrorEvent lists at most 100 details and counts the rest, whatever the command held', async () => {
  await app.admin.call('orderMappings.upsert', {
    brandAccountId: brand.accountId,
    fields: [{ key: 'city', target: 'shippingAddress.city', required: true }],
  });
  const orders = Array.from({ length: 100 }, () => ({
    mapping: Array.from({ length: 320 }, (_, k) => ({ key: `u${k}`, value: '' })),
  }));
  const cid = randomUUID();
  assert.is((await send({ _v: '1.0.0', _cid: cid, _type: 'CreateOrderFromMapping', orders })).status, 202);
  const result = await outcome(cid);
  assert.is(result.code, 'MAPPING_INVALID');
  // 320 unknown keys and one missing required key in each of 100 orders: 32,100 problems.
  assert.is(result.details.length, MAX_ERROR_DETAILS + 1);
  assert.equal(result.details.at(-1), { key: '', message: '32000 more problem(s), not listed: correct these first.' });
  assert.ok(JSON.stringify(result).length < 64 * 1024, `the event holds ${JSON.stringify(result).length} characters`);
});

test('_metadata is bounded (50 entries, keys of 40 and values of 500 characters), and so is every event a change makes', async () => {
  const metadata = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`ext-${i}`, 'v']));
  const many = await send({
    _v: '1.0.0',
    _cid: randomUUID(),
    _type: 'RefreshOrder',
    orderId: 'o',
    _metadata: metadata,
  });
  assert.equal([many.status, many.body.issues[0].path], [400, '_metadata']);
  const long = await send({
    _v: '1.0.0',
    _cid: randomUUID(),
    _type: 'RefreshOrder',
    orderId: 'o',
    _metadata: { 'ext-a': 'v'.repeat(501) },
  });
  assert.equal([long.status, long.body.issues[0].path], [400, '_metadata.ext-a']);
  // An order whose event would exceed MAX_EVENT_BYTES is refused, with nothing stored.
  const before = await snapshot(app.database);
  const file = { name: 'n', url: `https://files.example.com/${'u'.repeat(1900)}` };
  const documents = Array.from({ length: 40 }, () => ({ type: 'photo', files: Array.from({ length: 4 }, () => file) }));
  assert.ok(JSON.stringify(documents).length > MAX_EVENT_BYTES);
  const refused = await app.http
    .post('/trpc/admin.jobs.create')
    .set('authorization', `Bearer ${ADMIN_TOKEN}`)
    .send({ brandAccountId: brand.accountId, documents });
  assert.is(refused.status, 400, JSON.stringify(refused.body).slice(0, 300));
  assert.match(refused.body.error.message, /more than the 262144 an event may hold/);
  assert.equal(await snapshot(app.database), before, 'nothing stored');
});

// Last: run before the tests that snapshot the database, it made them see the commands table change (1 run in 2 on
// PostgreSQL); why was not traced.
test('an order or invoice id longer than an event may hold ends NOT_FOUND, its message shortened', async () => {
  const long = 'y'.repeat(300_000);
  for (const [body, code] of [
    [{ _type: 'RefreshOrder', orderId: long }, 'ORDER_NOT_FOUND'],
    [{ _type: 'RefreshInvoice', invoiceId: long }, 'INVOICE_NOT_FOUND'],
  ] as const) {
    const cid = randomUUID();
    assert.is((await send({ _v: '1.0.0', _cid: cid, ...body })).status, 202);
    const result = await outcome(cid);
    assert.equal([result._type, result.code], ['CommandErrorEvent', code]);
    assert.ok(String(result.message).length < 200, String(result.message).slice(0, 200));
  }
});

test.run();
