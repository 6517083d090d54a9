import { createHmac, randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WORK_ANNOUNCEMENT } from '../../adapters/persistence/wake-ups/announcer.ts';
import { ADMIN_TOKEN } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { sharedDatabase } from '../support/shared.ts';

// What one request costs the database: the EntityManager forks it makes (one unit of work per request, shared by
// authentication, the signature check and the use case) and the statements it sends (its round trips). Counted on the
// shared database while nothing else runs (no worker started); each figure is the least over a few requests, so that
// stray background work can only make a count larger, never pass a wrong one.
const test = suite('one request, one unit of work');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;
const KEY = 'request-units-signing-key';

test.before(async () => {
  app = await appWithMailbox({ TEST_CLOCK: '1' });
});

/** The wake-up notices a request that created work sends: one on PostgreSQL; the embedded database wakes in-process. */
const noticeOfWork = async () => ((await sharedDatabase()).kind === 'postgresql' ? 1 : 0);

/**
 * The forks and statements of a request (the least of `runs`), the statements of the last one by name, and the most
 * wake-up notices any one of them sent.
 */
async function cost(send: (i: number) => Promise<{ status: number }>, expectStatus: number, runs = 5) {
  const database = await sharedDatabase();
  const forkId = () => database.orm.em.fork().id;
  let forks = Infinity;
  let statements = Infinity;
  let notices = 0;
  let seen: string[] = [];
  for (let i = 0; i < runs; i++) {
    const names: string[] = [];
    const stop = database.statements.watch((s) => names.push(s));
    const forksBefore = forkId();
    const res = await send(i);
    const forksAfter = forkId();
    await noticesSettled(names);
    stop();
    assert.is(res.status, expectStatus, JSON.stringify(res));
    forks = Math.min(forks, forksAfter - forksBefore - 1);
    // The wake-up notice after a commit (PostgreSQL) is the workers', sent on a connection of its own: counted apart.
    const own = names.filter((name) => name !== WORK_ANNOUNCEMENT);
    if (own.length < statements) [statements, seen] = [own.length, own];
    notices = Math.max(notices, names.length - own.length);
  }
  return { forks, statements, seen, notices };
}

/** A request's notice goes out just after its commit, as its answer does: waits until none came for a while. */
async function noticesSettled(names: string[], quietMs = 40) {
  for (let seen = -1; seen !== names.filter((n) => n === WORK_ANNOUNCEMENT).length; ) {
    seen = names.filter((n) => n === WORK_ANNOUNCEMENT).length;
    await new Promise((resolve) => setTimeout(resolve, quietMs));
  }
}

test('POST /v3/commands: one fork and at most three round trips (the caller, its count, the command)', async () => {
  const brand = await integrator(app, 'brand');
  const job = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
  const { forks, statements, seen, notices } = await cost(
    (i) =>
      app.http
        .post('/v3/commands')
        .set('authorization', `Bearer ${brand.accessToken}`)
        .send({ _v: '1.0.0', _cid: `units-${randomUUID()}-${i}`, _type: 'RefreshOrder', orderId: job.apiId }),
    202,
  );
  assert.is(forks, 1, 'one EntityManager for the whole request');
  assert.ok(statements <= 3, `${statements} statements: ${seen.join(' | ')}`);
  assert.is(notices, await noticeOfWork(), 'the executor woken once');
});

test("a signed partner command: one fork, the partner's family read with its access, not again", async () => {
  const brand = await integrator(app, 'brand');
  const partner = await integrator(app, 'partner');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: partner.accountId,
    scope: 'partner',
    url: null,
    transformer: 'partner-format',
    version: '1.3.0',
    signatureKey: KEY,
  });
  // The brand's endpoint has a URL: the command's event for it is a delivery, work for the workers (not started here).
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: 'http://127.0.0.1:9/units',
    transformer: 'default',
    version: '1.3.0',
  });
  const job = await app.admin.call<{ apiId: string }>('jobs.create', {
    brandAccountId: brand.accountId,
    partnerId: partner.accountId,
    status: 'accepted',
  });
  const { forks, seen, notices } = await cost((i) => {
    const body = JSON.stringify({
      _v: '1.0.0',
      _cid: `units-${randomUUID()}-${i}`,
      _type: 'SetJobYourOrderId',
      jobApiId: job.apiId,
      yourOrderID: `Y-${i}`,
    });
    return app.http
      .post('/v3/commands/partner/your-order-id')
      .set('authorization', `Bearer ${partner.accessToken}`)
      .set('content-type', 'application/json')
      .set('x-webhook-signature', createHmac('sha256', KEY).update(body).digest('hex'))
      .send(body);
  }, 200);
  assert.is(forks, 1, 'one EntityManager: authentication, the signature check and the use case share it');
  assert.is(seen[0], 'contact-access-v2', `the caller's access and family first: ${seen.join(' | ')}`);
  assert.is(seen.filter((s) => s === 'partner-family').length, 0, `the family not read again: ${seen.join(' | ')}`);
  assert.is(notices, await noticeOfWork(), 'the delivery task woken once');
});

test("the polls, the listing and the feed: one fork each, a partner's family read with its access", async () => {
  const brand = await integrator(app, 'brand');
  const partner = await integrator(app, 'partner');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: partner.accountId,
    scope: 'partner',
    url: null,
    transformer: 'partner-format',
    version: '1.3.0',
  });
  await app.admin.call('jobs.create', {
    brandAccountId: brand.accountId,
    partnerId: partner.accountId,
    status: 'accepted',
  });
  const get = (path: string, token: string) => () => app.http.get(path).set('authorization', `Bearer ${token}`);
  for (const [path, token, status] of [
    [`/v3/commands/no-such-${randomUUID()}`, brand.accessToken, 404],
    ['/v3/partner-orders/paginated?page=1&pageSize=50', partner.accessToken, 200],
    ['/v3/events?limit=10', partner.accessToken, 200],
  ] as const) {
    const { forks, notices, seen } = await cost(get(path, token), status);
    assert.is(forks, 1, path);
    // A partner's family comes with its access, in the first round trip.
    if (token === partner.accessToken) assert.not.ok(seen.includes('partner-family'), `${path}: ${seen.join(' | ')}`);
    assert.is(notices, 0, `${path}: no work, no wake-up`);
  }
});

test('a mutation refused by its input, and one that needs no database, send nothing: the transaction begins on first use', async () => {
  const admin = (name: string, body: string) => () =>
    app.http
      .post(`/trpc/admin.${name}`)
      .set('authorization', `Bearer ${ADMIN_TOKEN}`)
      .set('content-type', 'application/json')
      .send(body);
  for (const [name, body, status] of [
    ['accounts.create', JSON.stringify({ name: 42, role: 'brand' }), 400],
    ['accounts.create', '{"name": "unfinished', 400],
    ['testClock.advance', JSON.stringify({ seconds: 1 }), 200],
    // A batch: each call takes a unit of its own, as lazy as a request's.
    [
      'testClock.advance,admin.testClock.advance?batch=1',
      JSON.stringify({ 0: { seconds: 1 }, 1: { seconds: 1 } }),
      200,
    ],
  ] as const) {
    const { forks, statements, seen, notices } = await cost(admin(name, body), status);
    assert.is(statements + notices, 0, `${name} ${body}: ${seen.join(' | ')}`);
    assert.is(forks, 0, `${name} ${body}: no EntityManager either`);
  }
});

test('nothing flushes through the ORM: accounts, contacts, logins, invoices, reasons and mappings are read and written as statements', async () => {
  // A flush runs inside MikroORM's AsyncLocalStorage, which turns Node's promise hooks on for the rest of the process
  // (adapters/persistence/detached.ts): counted here by the ORM's own flush event.
  let flushes = 0;
  (await sharedDatabase()).orm.em.getEventManager().registerSubscriber({
    beforeFlush: () => {
      flushes++;
    },
  });
  const brand = await integrator(app, 'brand'); // an account, a contact, a login by mail and an access token
  await app.admin.call('contacts.setApiAccess', { contactId: brand.contactId, apiAccess: false });
  await app.admin.call('contacts.setApiAccess', { contactId: brand.contactId, apiAccess: true });
  const job = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
  const invoice = await app.admin.call<{ id: string }>('invoices.create', {
    orderId: job.apiId,
    number: `U-${randomUUID()}`,
    type: 'invoice',
    status: 'sent',
    items: [],
  });
  await app.admin.call('cancellationReasons.upsert', {
    name: `UNITS_${randomUUID().slice(0, 8).toUpperCase()}`,
    outcome: 'cancelled',
  });
  await app.admin.call('orderMappings.upsert', {
    brandAccountId: brand.accountId,
    fields: [{ key: 'ref', target: 'externalId' }],
  });
  const res = await app.http
    .post('/v3/commands')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({ _v: '1.0.0', _cid: randomUUID(), _type: 'RefreshInvoice', invoiceId: invoice.id });
  assert.is(res.status, 202, JSON.stringify(res.body));
  await app.drainDeferred();
  assert.is(flushes, 0);
});

test.run();
