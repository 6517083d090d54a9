import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { document } from '../support/app.ts';
import { appWithMailbox } from '../support/integrators.ts';
import { closeAtEnd } from '../support/shared.ts';

// Tenant isolation of the asynchronous and self-service paths, as properties over random worlds of brands, master
// partners and their children (like tenant-isolation.test.ts, which covers polling, partner commands and listings):
// - brand commands (CONTRACT §5): every order-addressed command of one brand on another brand's order ends as a
//   CommandErrorEvent (RefreshInvoice, invoice-addressed, as INVOICE_NOT_FOUND) and leaves that order, its invoice and
//   its events exactly as they were; `_cid`s are per account; a partner token is 401;
// - the webhook configuration (CONTRACT §7, §10): GET/PUT/test address the caller's own (resolved) configuration
//   only, whatever ids are smuggled into the query or the body;
// - the delivery log, the feed and replay (CONTRACT §10): each account sees, and replays, exactly the deliveries and
//   events of its endpoint (a child without a configuration shares its master's, as CONTRACT §10 says); anything else
//   is 404 and changes nothing, and no delivery row appears.
// The oracle is computed from the world alone; the ground truth is read from the database. FUZZ_SEED/FUZZ_PATH replay
// a failure; ISOLATION_RUNS sets the number of worlds per property.
const test = suite('tenant isolation of brand commands, webhook configuration, delivery log and replay');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Role = 'brand' | 'partner';
/** What an account's own configuration is: none, one without a URL, one whose endpoint answers 200, one answering 500. */
type Kind = 'none' | 'quiet' | 'ok' | 'fail';
let app: App;
let hooks: Awaited<ReturnType<typeof hookReceiver>>;
const RUNS = Number(process.env.ISOLATION_RUNS ?? 6);
const replay = process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED), path: process.env.FUZZ_PATH } : {};

test.before(async () => {
  app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '20ms', WEBHOOK_TIMEOUT_MS: '1000' });
  app.worker.start();
  hooks = await hookReceiver();
});
test.after(() => app.worker.stop());

/** A webhook receiver that records the path of every request: `/ok/…` answers 200, `/fail/…` 500. */
async function hookReceiver() {
  const received: { path: string; headers: IncomingHttpHeaders; body: string; payload: Json }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => { body += chunk; });
    req.on('end', () => {
      let payload: Json = {};
      try { payload = JSON.parse(body); } catch { /* recorded as is */ }
      received.push({ path: req.url ?? '', headers: req.headers, body, payload });
      res.writeHead(req.url?.startsWith('/fail/') ? 500 : 200, { 'content-type': 'text/plain' }).end('.');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAtEnd(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const { port } = server.address() as AddressInfo;
  return { received, url: (path: string) => `http://127.0.0.1:${port}${path}` };
}

interface Account { id: string; role: Role; parent: string | null; kind: Kind; token: string }

const keyOf = (accountId: string) => `key-of-${accountId}`;
const configure = (accountId: string, role: Role, kind: Exclude<Kind, 'none'>, version = '1.3.0') =>
  app.admin.call('webhookConfigs.upsert', {
    accountId, scope: role, url: kind === 'quiet' ? null : hooks.url(`/${kind}/${accountId}`),
    transformer: role === 'partner' ? 'partner-format' : 'default', version, signatureKey: keyOf(accountId),
  });

async function account(role: Role, parent: string | null, kind: Kind, version?: string): Promise<Account> {
  const { id } = await app.admin.call<{ id: string }>('accounts.create', { name: `${role} ${randomUUID().slice(0, 6)}`, role, ...(parent && { parentId: parent }) });
  const { id: contactId } = await app.admin.call<{ id: string }>('contacts.create', { accountId: id, email: `iso-async-${randomUUID().slice(0, 12)}@example.com` });
  if (kind !== 'none') await configure(id, role, kind, version);
  const token = await app.services.unitOfWork().statements((deps) => deps.tokens.issue('access', { contactId, accountId: id, role }, deps.clock.now(), 3600));
  return { id, role, parent, kind, token };
}

/** Raw SQL on the shared database: the ground truth the answers are compared with. */
const sql = <T = Json>(text: string, values: unknown[] = []) => app.database.orm.em.fork().getConnection().execute<T[]>(text, values);
const ids = (accounts: readonly { id: string }[]) => accounts.map((a) => a.id).join(',');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const get = (path: string, who: Account) => app.http.get(path).set('authorization', `Bearer ${who.token}`);
const post = (path: string, who: Account, body: object = {}) => app.http.post(path).set('authorization', `Bearer ${who.token}`).send(body);
const put = (path: string, who: Account, body: object) => app.http.put(path).set('authorization', `Bearer ${who.token}`).send(body);

/** The command's outcome once it has run (204 until then). */
async function outcomeOf(who: Account, cid: string): Promise<Json> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await get(`/v3/commands/${encodeURIComponent(cid)}`, who);
    if (res.status === 200) return res.body;
    assert.is(res.status, 204, `poll of ${cid}: ${JSON.stringify(res.body)}`);
    if (Date.now() > deadline) throw new Error(`no outcome for ${cid} within 15 s`);
    await sleep(20);
  }
}

/** Every parameter and (nested) body property name of an operation, $refs followed. */
function fieldNames(doc: Json, op: Json): string[] {
  const names: string[] = (op.parameters ?? []).map((p: Json) => p.name);
  const seen = new Set<unknown>();
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    const n = node as Json;
    if (typeof n.$ref === 'string') walk(n.$ref.slice(2).split('/').reduce((at: Json | undefined, part: string) => at?.[part], doc));
    if (n.properties && typeof n.properties === 'object') names.push(...Object.keys(n.properties));
    for (const value of Object.values(n)) walk(value);
  };
  walk(op.requestBody);
  return names;
}

test('the self-service operations are the ones covered here, and none takes an account, scope or configuration', () => {
  const doc = document() as Json;
  const operations: string[] = [];
  const named: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    if (!/^\/v3\/(webhook-|events|commands$|commands\/\{)/.test(path)) continue;
    for (const [method, op] of Object.entries(item as Json)) {
      operations.push(`${method.toUpperCase()} ${path}`);
      named.push(...fieldNames(doc, op).filter((f) => /account|scope|config|endpoint|parent|tenant|owner/i.test(f)).map((f) => `${method.toUpperCase()} ${path}: ${f}`));
    }
  }
  // A new operation here is a new way in: this file must cover it before the list below grows.
  assert.equal(operations.sort(), [
    'GET /v3/commands/{cid}', 'GET /v3/events', 'GET /v3/webhook-config', 'GET /v3/webhook-deliveries', 'GET /v3/webhook-deliveries/{id}', 'POST /v3/commands',
    'POST /v3/webhook-config/rotate-key', 'POST /v3/webhook-config/test', 'POST /v3/webhook-deliveries/redeliver-failed', 'POST /v3/webhook-deliveries/{id}/redeliver', 'PUT /v3/webhook-config',
  ]);
  assert.equal(named, [], 'no parameter or body field names an account, a scope or a configuration');
  assert.ok(fieldNames(doc, doc.paths['/v3/commands'].post).includes('orderId'), 'the walk reaches the body fields');
});

// ---------------------------------------------------------------------------------------------------------------
// 1. Brand commands on another brand's order.

const word = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9-]{0,23}$/);
const customer = fc.record({
  email: fc.stringMatching(/^[a-z0-9]{1,16}$/).map((w) => `${w}@example.com`), externalId: word, firstName: word, lastName: word,
  mobilePhone: fc.constant('+49 170 0000'), phone: word, salutation: fc.constantFrom('Mr', 'Ms', 'Mx'),
}, { requiredKeys: [] }).filter((c) => Object.keys(c).length > 0);
const REASONS = ['CUSTOMER_WITHDREW', 'DUPLICATE_ORDER', 'OUTSIDE_SERVICE_AREA', 'CUSTOMER_UNREACHABLE', 'TECHNICAL_INFEASIBILITY'] as const;
const TERMINAL = new Set(['cancelled', 'closed']);

const commandWorld = fc.record({
  brands: fc.array(fc.boolean(), { minLength: 2, maxLength: 3 }),
  jobs: fc.array(fc.record({
    owner: fc.nat(2),
    sender: fc.nat(1),
    partner: fc.constantFrom('none', 'master', 'child'),
    status: fc.constantFrom('new', 'accepted', 'started', 'brand_cancellation_pending', 'cancelled', 'closed'),
    reuseCid: fc.boolean(),
    customer, externalId: word, invoicingExternalId: word, reason: fc.constantFrom(...REASONS),
  }), { minLength: 1, maxLength: 3 }),
});

type WorldJob = (typeof commandWorld extends fc.Arbitrary<infer T> ? T : never)['jobs'][number];
type OrderOfBrand = Omit<WorldJob, 'owner' | 'sender'> & {
  apiId: string; invoiceId: string; owner: Account; sender: Account; shared: { cid: string; result: Json } | null;
};

test('brand commands: another brand\'s order is not found and stays byte for byte as it was; _cids are per account; partners are 401', async () => {
  await fc.assert(fc.asyncProperty(commandWorld, async (w) => {
    const brands: Account[] = [];
    for (const config of w.brands) brands.push(await account('brand', null, config ? 'quiet' : 'none'));
    const master = await account('partner', null, 'quiet');
    const child = await account('partner', master.id, 'none');
    const jobs: OrderOfBrand[] = [];
    for (const j of w.jobs) {
      const owner = brands[j.owner % brands.length]!;
      const others = brands.filter((b) => b !== owner);
      const partnerId = j.partner === 'master' ? master.id : j.partner === 'child' ? child.id : null;
      const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: owner.id, partnerId, status: j.status });
      const { id: invoiceId } = await app.admin.call<{ id: string }>('invoices.create', {
        orderId: apiId, number: `I-${apiId.slice(0, 8)}`, type: 'invoice', status: 'sent', items: [{ description: 'x', quantity: 1, unitPrice: 2, total: 2 }],
      });
      // A `_cid` the owner has used already: another account may use it too, as its own.
      let shared: { cid: string; result: Json } | null = null;
      if (j.reuseCid) {
        const cid = randomUUID();
        assert.is((await post('/v3/commands', owner, { _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: apiId })).status, 202);
        const result = await outcomeOf(owner, cid);
        assert.equal([result._type, result.result], ['CommandResultEvent', { orderId: apiId }]);
        shared = { cid, result };
      }
      jobs.push({ ...j, apiId, invoiceId, owner, sender: others[j.sender % others.length]!, shared });
    }

    /** Everything of the order that a command could touch: its poll as its owner, its row, its invoice, its events. */
    const stateOf = async (job: OrderOfBrand) => ({
      polled: (await get(`/v3/poll/job/*/${job.apiId}`, job.owner)).text,
      row: (await sql<{ r: string }>('select to_jsonb(j)::text as r from jobs j where api_id = ?', [job.apiId]))[0]?.r,
      invoice: (await sql<{ r: string }>('select to_jsonb(i)::text as r from invoices i where id::text = ?', [job.invoiceId]))[0]?.r,
      events: (await sql<{ n: string }>('select count(*)::text as n from events where order_id = ?', [job.apiId]))[0]?.n,
    });
    const before: Awaited<ReturnType<typeof stateOf>>[] = [];
    for (const job of jobs) {
      const state = await stateOf(job);
      assert.ok(state.row && state.invoice && JSON.parse(state.polled).orderId === job.apiId, 'the owner reads its order');
      before.push(state);
    }

    // A partner token on POST /v3/commands: 401, nothing stored (its _cid is unknown to it afterwards).
    for (const partner of [master, child]) {
      const cid = randomUUID();
      const refused = await post('/v3/commands', partner, { _v: '1.0.0', _cid: cid, _type: 'UpdateOrderExternalId', orderId: jobs[0]!.apiId, externalId: 'by-a-partner' });
      assert.equal([refused.status, refused.body.code], [401, 'UNAUTHORIZED'], 'a partner token on POST /v3/commands');
      assert.is((await get(`/v3/commands/${cid}`, partner)).status, 404, 'a refused command is not stored');
    }

    // Every order-addressed command, from another brand.
    const sent: { sender: Account; cid: string; type: string; code: string; job: OrderOfBrand }[] = [];
    for (const job of jobs) {
      const bodies: [string, Json, string][] = [
        ['RefreshOrder', { orderId: job.apiId }, 'ORDER_NOT_FOUND'],
        // Invoice-addressed: the invoice of another brand's order is not found (CONTRACT §3 INVOICE_NOT_FOUND).
        ['RefreshInvoice', { invoiceId: job.invoiceId }, 'INVOICE_NOT_FOUND'],
        ['UpdateCustomer', { orderId: job.apiId, customer: job.customer }, 'ORDER_NOT_FOUND'],
        ['UpdateOrderExternalId', { orderId: job.apiId, externalId: job.externalId }, 'ORDER_NOT_FOUND'],
        ['UpdateOrderInvoicingExternalId', { orderId: job.apiId, invoicingExternalId: job.invoicingExternalId }, 'ORDER_NOT_FOUND'],
        ['ApplyCancellation', { orderId: job.apiId, cancellationReason: job.reason }, 'ORDER_NOT_FOUND'],
      ];
      for (const [type, fields, code] of bodies) {
        const cid = type === 'RefreshOrder' && job.shared ? job.shared.cid : randomUUID();
        const res = await post('/v3/commands', job.sender, { _v: '1.0.0', _cid: cid, _type: type, ...fields });
        assert.is(res.status, 202, `${type} on another brand's order: ${JSON.stringify(res.body)}`);
        assert.equal(res.body, { _cid: cid, _type: type, status: 'accepted' });
        sent.push({ sender: job.sender, cid, type, code, job });
      }
    }
    for (const s of sent) {
      const outcome = await outcomeOf(s.sender, s.cid);
      assert.equal(
        [outcome._type, outcome.code, outcome.commandType, outcome._cid, outcome.details],
        ['CommandErrorEvent', s.code, s.type, s.cid, null],
        `${s.type} on ${s.job.apiId} of another brand (status ${s.job.status}): ${JSON.stringify(outcome)}`,
      );
      // The sender's outcome is its own: neither the order's owner nor a partner reads it (tenant-isolation.test.ts
      // covers every pair of accounts); the owner of a shared _cid reads its own result under it.
      for (const other of [s.job.owner, s.job.partner === 'child' ? child : master]) {
        const res = await get(`/v3/commands/${s.cid}`, other);
        if (other === s.job.owner && s.job.shared?.cid === s.cid) assert.equal([res.status, res.body], [200, s.job.shared.result], 'the owner\'s own result under the shared _cid');
        else assert.is(res.status, 404, 'another account\'s command result');
      }
    }

    for (const [i, job] of jobs.entries()) assert.equal(await stateOf(job), before[i], `${job.apiId} of another brand is unchanged, and no event was written for it`);

    // The same kind of command from the owner does change it: the comparison above can tell.
    const target = jobs.find((j) => !TERMINAL.has(j.status));
    const control = target ?? jobs[0]!;
    const cid = randomUUID();
    const body = target
      ? { _v: '1.0.0', _cid: cid, _type: 'UpdateOrderExternalId', orderId: control.apiId, externalId: `own-${cid.slice(0, 8)}` }
      : { _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: control.apiId };
    assert.is((await post('/v3/commands', control.owner, body)).status, 202);
    assert.is((await outcomeOf(control.owner, cid))._type, 'CommandResultEvent', 'the owner\'s command succeeds');
    const after = await stateOf(control);
    assert.is(Number(after.events), Number(before[jobs.indexOf(control)]!.events) + (target && control.partner !== 'none' ? 2 : 1));
    if (target) assert.is.not(after.polled, before[jobs.indexOf(control)]!.polled);
  }), { numRuns: RUNS, includeErrorInReport: true, ...replay });
});

// ---------------------------------------------------------------------------------------------------------------
// 2. Webhook configuration self-service: GET, PUT and the endpoint test address the caller's own, nothing else.

const VERSIONS = ['1.0.0', '1.1.0', '1.3.0'] as const;
const hierarchy = <K>(kind: fc.Arbitrary<K>) => fc.record({
  brands: fc.array(kind, { minLength: 1, maxLength: 2 }),
  masters: fc.array(fc.record({ kind, children: fc.array(kind, { maxLength: 2 }) }), { minLength: 1, maxLength: 2 }),
});

async function accountsOf<K extends Kind>(w: { brands: K[]; masters: { kind: K; children: K[] }[] }, version: () => string = () => '1.3.0') {
  const all: Account[] = [];
  for (const kind of w.brands) all.push(await account('brand', null, kind, version()));
  for (const m of w.masters) {
    const master = await account('partner', null, m.kind, version());
    all.push(master);
    for (const kind of m.children) all.push(await account('partner', master.id, kind, version()));
  }
  return all;
}

const configWorld = fc.record({
  world: hierarchy(fc.constantFrom<Kind>('none', 'ok', 'ok')),
  versions: fc.array(fc.constantFrom(...VERSIONS), { minLength: 8, maxLength: 8 }),
  puts: fc.array(fc.record({ version: fc.constantFrom(...VERSIONS), enabled: fc.boolean(), smuggle: fc.nat() }), { minLength: 8, maxLength: 8 }),
});

test('webhook configuration: each account reads, tests and replaces its own; smuggled ids address nobody else', async () => {
  await fc.assert(fc.asyncProperty(configWorld, async ({ world, versions, puts }) => {
    let n = 0;
    const accounts = await accountsOf(world, () => versions[n++ % versions.length]!);
    const byId = new Map(accounts.map((a) => [a.id, a]));
    /** Every stored configuration of the world's accounts, whole (key, timestamps and all). */
    const rows = async () => new Map((await sql<{ account_id: string; r: string }>(
      `select account_id::text, to_jsonb(w)::text as r from webhook_configs w where account_id = any(string_to_array(?, ',')::uuid[])`, [ids(accounts)],
    )).map((row) => [row.account_id, row.r]));
    let model = await rows();
    const own = (a: Account) => (model.has(a.id) ? JSON.parse(model.get(a.id)!) as Json : null);
    /** CONTRACT §10: the caller's endpoint is its own configuration, a partner's else its master's. */
    const endpointOwner = (a: Account) => (own(a) ? a : a.role === 'partner' && a.parent && own(byId.get(a.parent)!) ? byId.get(a.parent)! : null);
    const viewOf = (config: Json) => ({
      scope: config.scope, url: config.url, transformer: config.transformer, version: config.version, enabled: config.enabled, hasSignatureKey: config.signature_key !== null,
      previousKeyExpiresAt: config.previous_key_expires_at && new Date(config.previous_key_expires_at).toISOString(),
      failingSince: config.failing_since ? new Date(config.failing_since).toISOString() : null, disabledReason: config.disabled_reason,
    });

    for (const [i, x] of accounts.entries()) {
      const other = x.parent ? byId.get(x.parent)! : accounts[(i + 1 + puts[i % puts.length]!.smuggle) % accounts.length]!;
      const otherConfigId = own(other)?.id ?? randomUUID();
      const smuggled = { accountId: other.id, scope: other.role, id: otherConfigId, configId: otherConfigId, parentId: other.id };

      // GET: its own configuration, or 404 (a child's master's configuration is not its own, CONTRACT §7).
      const plain = await get('/v3/webhook-config', x);
      const mine = own(x);
      assert.equal([plain.status, plain.status === 200 ? plain.body : null], mine ? [200, viewOf(mine)] : [404, null], `GET of ${x.role} ${x.id}`);
      const query = new URLSearchParams(smuggled).toString();
      const sneaky = await get(`/v3/webhook-config?${query}`, x);
      assert.ok([400, plain.status].includes(sneaky.status), `GET with another's ids: ${sneaky.status}`);
      if (sneaky.status === 200) assert.equal(sneaky.body, plain.body);
      const typed = await app.http.get(`/trpc/webhookConfig.get?input=${encodeURIComponent(JSON.stringify(smuggled))}`).set('authorization', `Bearer ${x.token}`);
      if (mine) assert.equal(typed.body.result?.data, viewOf(mine), 'typed GET with another\'s ids');
      else assert.is(typed.status, 404, 'typed GET with another\'s ids');

      // The endpoint test goes to the caller's endpoint (its own, else its master's), signed with that key; no other.
      const seen = hooks.received.length;
      // Smuggled ids are members the test does not define: refused (400), with nothing sent; then the clean request.
      const refused = await post('/v3/webhook-config/test', x, smuggled);
      assert.equal([refused.status, hooks.received.length], [400, seen], 'a test with another\'s ids is refused, nothing sent');
      const tested = await post('/v3/webhook-config/test', x, {});
      const target = endpointOwner(x);
      if (!target) {
        assert.is(tested.status, x.role === 'partner' ? 403 : 404, `test without an endpoint (${x.role})`);
        assert.is(hooks.received.length, seen, 'nothing sent');
      } else {
        const config = own(target)!;
        assert.equal([tested.status, tested.body.delivered], [200, true], `test: ${JSON.stringify(tested.body)}`);
        const sent = hooks.received.slice(seen);
        assert.equal(sent.map((r) => [r.path, r.payload._type]), [[new URL(config.url).pathname, 'WebhookTestEvent']], 'one test event, at the caller\'s endpoint');
        assert.is(sent[0]!.headers['x-webhook-signature'], createHmac('sha256', config.signature_key).update(sent[0]!.body).digest('hex'), 'signed with that endpoint\'s key');
      }

      // PUT with another's ids in the body: the caller's own configuration is replaced; nobody else's changes.
      const p = puts[i % puts.length]!;
      const newKey = `new-key-${randomUUID()}`;
      const url = hooks.url(`/ok/${x.id}/v${i}`);
      const transformer = x.role === 'partner' ? 'partner-format' : 'default';
      const replaced = await put('/v3/webhook-config', x, { url, transformer, version: p.version, enabled: p.enabled, signatureKey: newKey, ...smuggled });
      if (replaced.status === 400) {
        // A strict body would be as good: then nothing may have changed, and the clean PUT must go through.
        assert.equal(await rows(), model, 'a refused PUT changes nothing');
        assert.is((await put('/v3/webhook-config', x, { url, transformer, version: p.version, enabled: p.enabled, signatureKey: newKey })).status, 200);
      } else {
        assert.equal([replaced.status, replaced.body], [200, { scope: x.role, url, transformer, version: p.version, enabled: p.enabled, hasSignatureKey: true, previousKeyExpiresAt: null }]);
        assert.not.ok(replaced.text.includes(newKey), 'the key is never echoed');
      }
      const now = await rows();
      const changed = JSON.parse(now.get(x.id) ?? 'null') as Json | null;
      assert.equal([changed?.url, changed?.signature_key, changed?.scope, changed?.version], [url, newKey, x.role, p.version], 'the caller\'s own configuration');
      if (mine) assert.is(changed!.id, mine.id, 'replaced in place');
      for (const a of accounts.filter((y) => y !== x)) assert.is(now.get(a.id), model.get(a.id), `${a.role} ${a.id}'s configuration is untouched by ${x.id}`);
      model = now;

      // Rotating the key (CONTRACT §11): another's ids in the body are refused with nothing changed; the clean rotation
      // changes the caller's own configuration, and nobody else's.
      const rotatedKey = `rotated-key-${randomUUID()}`;
      const sneakyRotation = await post('/v3/webhook-config/rotate-key', x, { signatureKey: rotatedKey, ...smuggled });
      assert.is(sneakyRotation.status, 400, 'a rotation with another\'s ids is refused');
      assert.equal(await rows(), model, 'and changes nothing');
      const rotated = await post('/v3/webhook-config/rotate-key', x, { signatureKey: rotatedKey, previousKeyValidFor: 60 });
      assert.equal([rotated.status, rotated.body.hasSignatureKey, typeof rotated.body.previousKeyExpiresAt], [200, true, 'string'], JSON.stringify(rotated.body));
      const afterRotation = await rows();
      const ownRow = JSON.parse(afterRotation.get(x.id)!) as Json;
      assert.equal([ownRow.signature_key, ownRow.previous_signature_key], [rotatedKey, newKey], 'the caller\'s own key rotated');
      for (const a of accounts.filter((y) => y !== x)) assert.is(afterRotation.get(a.id), model.get(a.id), `${a.role} ${a.id}'s configuration is untouched by ${x.id}'s rotation`);
      model = afterRotation;
    }

    // Id-addressed paths do not exist; admin procedures refuse integrator tokens. Nothing changes.
    const [x, y] = [accounts[0]!, accounts.at(-1)!];
    const yConfig = own(y)!.id as string;
    for (const res of [
      await get(`/v3/webhook-config/${yConfig}`, x), await get(`/v3/webhook-config/${y.id}`, x),
      await put(`/v3/webhook-config/${yConfig}`, x, { url: hooks.url('/ok/evil'), transformer: 'default', version: '1.3.0' }),
      await app.http.delete(`/v3/webhook-config/${yConfig}`).set('authorization', `Bearer ${x.token}`),
    ]) assert.ok([404, 405].includes(res.status), `an id-addressed configuration path: ${res.status}`);
    const admin = await app.http.post('/trpc/admin.webhookConfigs.upsert').set('authorization', `Bearer ${x.token}`)
      .send({ accountId: y.id, scope: y.role, url: hooks.url('/ok/evil'), transformer: y.role === 'partner' ? 'partner-format' : 'default', version: '1.3.0' });
    assert.is(admin.status, 401, 'an integrator token on an admin procedure');
    const adminRotation = await app.http.post('/trpc/admin.webhookConfigs.rotateKey').set('authorization', `Bearer ${x.token}`)
      .send({ accountId: y.id, scope: y.role, signatureKey: `evil-key-${randomUUID()}` });
    assert.is(adminRotation.status, 401, 'an integrator token on the admin rotation');
    assert.equal(await rows(), model, 'nothing changed');
  }), { numRuns: RUNS, includeErrorInReport: true, ...replay });
});

// ---------------------------------------------------------------------------------------------------------------
// 3. The delivery log, the feed and replay.

const deliveryWorld = fc.record({
  world: hierarchy(fc.constantFrom<Kind>('none', 'quiet', 'ok', 'fail', 'fail')),
  jobs: fc.array(fc.record({ brand: fc.nat(1), partner: fc.option(fc.nat(5), { nil: null }), change: fc.boolean() }), { minLength: 2, maxLength: 5 }),
  pageSize: fc.integer({ min: 1, max: 4 }),
  replayer: fc.nat(),
  redeliverer: fc.nat(),
});

interface DeliveryRow { id: string; account_id: string; status: string; attempts: number }

test('delivery log, feed and replay: each account sees and replays exactly its endpoint\'s; another\'s is 404 and nothing changes', async () => {
  await fc.assert(fc.asyncProperty(deliveryWorld, async (w) => {
    const since = new Date(Date.now() - 1000).toISOString();
    const accounts = await accountsOf(w.world);
    const brands = accounts.filter((a) => a.role === 'brand');
    const partners = accounts.filter((a) => a.role === 'partner');
    const byId = new Map(accounts.map((a) => [a.id, a]));
    for (const j of w.jobs) {
      const partner = j.partner === null ? null : partners[j.partner % partners.length]!;
      const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brands[j.brand % brands.length]!.id, partnerId: partner?.id ?? null, status: 'accepted' });
      if (j.change) await app.admin.call('jobs.setStatus', { apiId, status: 'started' });
    }

    // The oracle (CONTRACT §10): whose endpoint an account's events and deliveries belong to.
    const ownerOf = (a: Account): Account | null =>
      (a.kind !== 'none' ? a : a.role === 'partner' && a.parent && byId.get(a.parent)!.kind !== 'none' ? byId.get(a.parent)! : null);
    const deliveries = async () => sql<DeliveryRow>(
      `select id::text, account_id::text, status, attempts from deliveries where account_id = any(string_to_array(?, ',')::uuid[]) order by id`, [ids(accounts)]);
    /** Every delivery of the world, whole, with its tries: equal means nothing changed and no row appeared. */
    const fingerprint = async (except: (d: DeliveryRow) => boolean = () => false) => (await sql<DeliveryRow & { r: string }>(
      `select d.id::text, d.account_id::text, d.status, d.attempts, (to_jsonb(d) - 'lease_until' - 'claim_token')::text
         || (select count(*)::text || coalesce(max(a.at)::text, '') from delivery_attempts a where a.delivery_id = d.id) as r
       from deliveries d where d.account_id = any(string_to_array(?, ',')::uuid[]) order by d.id`, [ids(accounts)],
    )).filter((d) => !except(d)).map((d) => d.r);
    async function settled() {
      for (const deadline = Date.now() + 15_000; ;) {
        const rows = await deliveries();
        if (rows.every((d) => d.status !== 'pending')) return rows;
        if (Date.now() > deadline) throw new Error(`deliveries still pending: ${rows.filter((d) => d.status === 'pending').length}`);
        await sleep(25);
      }
    }

    let rows = await settled();
    for (const d of rows) assert.ok(['ok', 'fail'].includes(ownerOf(byId.get(d.account_id)!)?.kind ?? 'none'), 'a delivery only to an endpoint with a URL');
    const events = await sql<{ id: string; account_id: string }>(
      `select id::text, account_id::text from events where account_id = any(string_to_array(?, ',')::uuid[])`, [ids(accounts)]);
    const sameEndpoint = (x: Account) => (d: { account_id: string }) => ownerOf(byId.get(d.account_id)!) === ownerOf(x);
    const before = await fingerprint();

    for (const x of accounts) {
      const owner = ownerOf(x);
      const refused = x.role === 'partner' ? 403 : 404;
      if (!owner) {
        assert.is((await get('/v3/webhook-deliveries', x)).status, refused, 'no endpoint: no delivery log');
        assert.is((await get('/v3/events', x)).status, refused, 'no endpoint: no feed');
        assert.is((await post('/v3/webhook-deliveries/redeliver-failed', x, { since })).status, refused);
        if (rows[0]) assert.is((await post(`/v3/webhook-deliveries/${rows[0].id}/redeliver`, x)).status, refused);
        if (rows[0]) assert.is((await get(`/v3/webhook-deliveries/${rows[0].id}`, x)).status, refused);
        continue;
      }
      const mine = rows.filter(sameEndpoint(x));

      // The log, page by page: exactly the deliveries of the caller's endpoint, newest first, each naming its URL.
      const listed: Json[] = [];
      for (let cursor: string | null = null, pages = 0; ; pages++) {
        const res = await get(`/v3/webhook-deliveries?limit=${w.pageSize}${cursor ? `&before=${encodeURIComponent(cursor)}` : ''}`, x);
        assert.is(res.status, 200, JSON.stringify(res.body));
        listed.push(...res.body.items);
        cursor = res.body.next;
        if (!cursor) break;
        assert.ok(pages < 100, 'the log ends');
      }
      assert.equal(listed.map((d) => d.id).sort(), mine.map((d) => d.id).sort(), `the log of ${x.role} ${x.id} (endpoint of ${owner.id})`);
      assert.ok(listed.every((d) => d.url === hooks.url(`/${owner.kind}/${owner.id}`)), 'every item at the caller\'s endpoint');
      for (const status of ['failed', 'delivered'] as const) {
        const res = await get(`/v3/webhook-deliveries?status=${status}&limit=100`, x);
        assert.equal(res.body.items.map((d: Json) => d.id).sort(), mine.filter((d) => d.status === status).map((d) => d.id).sort(), `the ${status} log`);
      }

      // The feed: exactly the events of the caller's endpoint (positions are given in the background: wait for them).
      const expected = events.filter(sameEndpoint(x)).map((e) => e.id).sort();
      let fed: string[] = [];
      for (const deadline = Date.now() + 10_000; ;) {
        const res = await get('/v3/events?limit=500', x);
        assert.is(res.status, 200);
        fed = res.body.items.map((e: Json) => e._eid).sort();
        if (fed.length >= expected.length || Date.now() > deadline) break;
        await sleep(25);
      }
      assert.equal(fed, expected, `the feed of ${x.role} ${x.id}`);

      // One of its own deliveries in full; another endpoint's deliveries (one of each other endpoint) and an unknown id:
      // 404, over REST and typed RPC.
      if (mine[0]) {
        const res = await get(`/v3/webhook-deliveries/${mine[0].id}`, x);
        assert.equal([res.status, res.body.id], [200, mine[0].id], `its own delivery in full (${x.id})`);
      }
      const foreignOwners = new Set<string>();
      for (const d of rows.filter((r) => !sameEndpoint(x)(r))) {
        const of = ownerOf(byId.get(d.account_id)!)!.id;
        if (foreignOwners.has(of)) continue;
        foreignOwners.add(of);
        const res = await post(`/v3/webhook-deliveries/${d.id}/redeliver`, x);
        assert.equal([res.status, res.body.code], [404, 'NOT_FOUND'], `redeliver of another endpoint's delivery (${x.id} → ${of})`);
        const typed = await app.http.post('/trpc/webhookDeliveries.redeliver').set('authorization', `Bearer ${x.token}`).send({ id: d.id });
        assert.is(typed.status, 404, 'typed redeliver of another endpoint\'s delivery');
        const read = await get(`/v3/webhook-deliveries/${d.id}`, x);
        assert.equal([read.status, read.body.code], [404, 'NOT_FOUND'], `another endpoint's delivery in full (${x.id} → ${of})`);
        const typedRead = await app.http.get(`/trpc/webhookDeliveries.get?input=${encodeURIComponent(JSON.stringify({ id: d.id }))}`).set('authorization', `Bearer ${x.token}`);
        assert.is(typedRead.status, 404, 'typed read of another endpoint\'s delivery');
      }
      assert.is((await get(`/v3/webhook-deliveries/${randomUUID()}`, x)).status, 404);
      assert.is((await post(`/v3/webhook-deliveries/${randomUUID()}/redeliver`, x)).status, 404);
    }

    // Admin procedures take account ids: integrator tokens are refused there.
    const [x, y] = [accounts[0]!, accounts.at(-1)!];
    const asX = (req: import('supertest').Test) => req.set('authorization', `Bearer ${x.token}`);
    assert.is((await asX(app.http.get(`/trpc/admin.deliveries.list?input=${encodeURIComponent(JSON.stringify({ accountId: y.id }))}`))).status, 401);
    assert.is((await asX(app.http.post('/trpc/admin.deliveries.redeliverFailed')).send({ accountId: y.id, since })).status, 401);
    if (rows[0]) assert.is((await asX(app.http.post('/trpc/admin.deliveries.redeliver')).send({ deliveryId: rows[0].id })).status, 401);
    if (rows[0]) assert.is((await asX(app.http.get(`/trpc/admin.deliveries.get?input=${encodeURIComponent(JSON.stringify({ deliveryId: rows[0].id }))}`))).status, 401);
    // Another endpoint's delivery is not found by its id, and there is no path that reads an event by its id.
    const foreign = rows.find((d) => ownerOf(byId.get(d.account_id)!) !== ownerOf(x));
    const foreignEvent = events.find((e) => ownerOf(byId.get(e.account_id)!) !== ownerOf(x));
    for (const path of [foreign && `/v3/webhook-deliveries/${foreign.id}`, foreignEvent && `/v3/events/${foreignEvent.id}`].filter(Boolean)) {
      assert.ok([404, 405].includes((await get(path!, x)).status), `GET ${path}`);
    }

    assert.equal(await fingerprint(), before, 'no delivery changed and none appeared');

    // Replay of every failed delivery: the caller's endpoint's only, counted; the others' stay as they were.
    const withEndpoint = accounts.filter((a) => ownerOf(a));
    if (withEndpoint.length > 0) {
      const replayer = withEndpoint[w.replayer % withEndpoint.length]!;
      const own = sameEndpoint(replayer);
      const failed = rows.filter((d) => own(d) && d.status === 'failed');
      const others = await fingerprint(own);
      const res = await post('/v3/webhook-deliveries/redeliver-failed', replayer, { since });
      assert.equal([res.status, res.body], [202, { count: failed.length }], `redeliver-failed of ${replayer.id}`);
      rows = await settled();
      assert.equal(await fingerprint(own), others, 'replay leaves the other endpoints\' deliveries alone');
      for (const d of failed) assert.ok(rows.find((r) => r.id === d.id)!.attempts > d.attempts, 'the replayed deliveries were tried again');
    }

    // One delivery again, by an account of its endpoint.
    const reachable = accounts.filter((a) => rows.some(sameEndpoint(a)));
    if (reachable.length > 0) {
      const redeliverer = reachable[w.redeliverer % reachable.length]!;
      const own = rows.filter(sameEndpoint(redeliverer));
      const d = own[w.redeliverer % own.length]!;
      const others = await fingerprint((r) => r.id === d.id);
      const res = await post(`/v3/webhook-deliveries/${d.id}/redeliver`, redeliverer);
      assert.equal([res.status, res.body], [202, { id: d.id, status: 'pending' }], 'one\'s own delivery again');
      rows = await settled();
      assert.ok(rows.find((r) => r.id === d.id)!.attempts > d.attempts, 'sent again');
      assert.equal(await fingerprint((r) => r.id === d.id), others, 'nothing else changed');
    }
  }), { numRuns: RUNS, includeErrorInReport: true, ...replay });
});

test.run();
