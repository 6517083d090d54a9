import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox } from '../../support/integrators.ts';
import { closeAtEnd } from '../../support/shared.ts';

// Tenant isolation of the asynchronous and self-service paths, as properties over random worlds of brands, master
// partners and their children (like ../tenant-isolation.test.ts, which covers polling, partner commands and listings):
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
// This file holds what the suites beside it share: the app and its webhook receiver, accounts, requests, the oracle's
// helpers.
export type App = Awaited<ReturnType<typeof appWithMailbox>>;
export type Json = Record<string, any>;
export type Role = 'brand' | 'partner';
/**
 * What an account's own configuration is: none, one without a URL, one whose endpoint answers 200, one answering 500.
 */
export type Kind = 'none' | 'quiet' | 'ok' | 'fail';
export let app: App;
export let hooks: Awaited<ReturnType<typeof hookReceiver>>;
export const RUNS = Number(process.env.ISOLATION_RUNS ?? 6);
export const replay = process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED), path: process.env.FUZZ_PATH } : {};

/** Gives a suite the app, its worker running, and a fresh webhook receiver. */
export function withIsolationApp(test: Test) {
  test.before(async () => {
    app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '20ms', WEBHOOK_TIMEOUT_MS: '1000' });
    app.worker.start();
    hooks = await hookReceiver();
  });
  test.after(() => app.worker.stop());
}

/** A webhook receiver that records the path of every request: `/ok/…` answers 200, `/fail/…` 500. */
async function hookReceiver() {
  const received: { path: string; headers: IncomingHttpHeaders; body: string; payload: Json }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      let payload: Json = {};
      try {
        payload = JSON.parse(body);
      } catch {
        /* recorded as is */
      }
      received.push({ path: req.url ?? '', headers: req.headers, body, payload });
      res.writeHead(req.url?.startsWith('/fail/') ? 500 : 200, { 'content-type': 'text/plain' }).end('.');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAtEnd(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { received, url: (path: string) => `http://127.0.0.1:${port}${path}` };
}

export interface Account {
  id: string;
  role: Role;
  parent: string | null;
  kind: Kind;
  token: string;
}
export const keyOf = (accountId: string) => `key-of-${accountId}`;
const configure = (accountId: string, role: Role, kind: Exclude<Kind, 'none'>, version = '1.3.0') =>
  app.admin.call('webhookConfigs.upsert', {
    accountId,
    scope: role,
    url: kind === 'quiet' ? null : hooks.url(`/${kind}/${accountId}`),
    transformer: role === 'partner' ? 'partner-format' : 'default',
    version,
    signatureKey: keyOf(accountId),
  });

export async function account(role: Role, parent: string | null, kind: Kind, version?: string): Promise<Account> {
  const { id } = await app.admin.call<{ id: string }>('accounts.create', {
    name: `${role} ${randomUUID().slice(0, 6)}`,
    role,
    ...(parent && { parentId: parent }),
  });
  const { id: contactId } = await app.admin.call<{ id: string }>('contacts.create', {
    accountId: id,
    email: `iso-async-${randomUUID().slice(0, 12)}@example.com`,
  });
  if (kind !== 'none') await configure(id, role, kind, version);
  const token = await app.services
    .unitOfWork()
    .statements((deps) => deps.tokens.issue('access', { contactId, accountId: id, role }, deps.clock.now(), 3600));
  return { id, role, parent, kind, token };
}

/** Raw SQL on the shared database: the ground truth the answers are compared with. */
export const sql = <T = Json>(text: string, values: unknown[] = []) =>
  app.database.orm.em.fork().getConnection().execute<T[]>(text, values);
export const ids = (accounts: readonly { id: string }[]) => accounts.map((a) => a.id).join(',');
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const get = (path: string, who: Account) => app.http.get(path).set('authorization', `Bearer ${who.token}`);
export const post = (path: string, who: Account, body: object = {}) =>
  app.http.post(path).set('authorization', `Bearer ${who.token}`).send(body);
export const put = (path: string, who: Account, body: object) =>
  app.http.put(path).set('authorization', `Bearer ${who.token}`).send(body);

/** The command's outcome once it has run (204 until then). */
export async function outcomeOf(who: Account, cid: string): Promise<Json> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await get(`/v3/commands/${encodeURIComponent(cid)}`, who);
    if (res.status === 200) return res.body;
    assert.is(res.status, 204, `poll of ${cid}: ${JSON.stringify(res.body)}`);
    if (Date.now() > deadline) throw new Error(`no outcome for ${cid} within 15 s`);
    await sleep(20);
  }
}

export const hierarchy = <K>(kind: fc.Arbitrary<K>) =>
  fc.record({
    brands: fc.array(kind, { minLength: 1, maxLength: 2 }),
    masters: fc.array(fc.record({ kind, children: fc.array(kind, { maxLength: 2 }) }), { minLength: 1, maxLength: 2 }),
  });

export async function accountsOf<K extends Kind>(
  w: { brands: K[]; masters: { kind: K; children: K[] }[] },
  version: () => string = () => '1.3.0',
) {
  const all: Account[] = [];
  for (const kind of w.brands) all.push(await account('brand', null, kind, version()));
  for (const m of w.masters) {
    const master = await account('partner', null, m.kind, version());
    all.push(master);
    for (const kind of m.children) all.push(await account('partner', master.id, kind, version()));
  }
  return all;
}
