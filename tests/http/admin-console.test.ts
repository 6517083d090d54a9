import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testApp } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { snapshot } from '../support/snapshot.ts';

// The operator console's procedures (docs/operators.md, "The operator console"): reads across accounts over /trpc.
const test = suite("the operator console's admin procedures");
type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Json = Record<string, any>;
let app: App;
let brand: Awaited<ReturnType<typeof integrator>>;
let ids: { master: string; child: string; job: string; cid: string; failed: Json };
const tag = randomUUID().slice(0, 8);

async function until<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`no ${what} within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

test.before(async () => {
  // One attempt and one retry 50 ms on: a refused connection leaves a failed delivery at once.
  app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '50ms', WEBHOOK_TIMEOUT_MS: '1000' });
  app.worker.start();
  brand = await integrator(app, 'brand');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: 'http://127.0.0.1:1/refused',
    transformer: 'default',
    version: '1.3.0',
  });
  const master = (await app.admin.call<{ id: string }>('accounts.create', { name: `Master ${tag}`, role: 'partner' }))
    .id;
  const child = (
    await app.admin.call<{ id: string }>('accounts.create', { name: `Child ${tag}`, role: 'partner', parentId: master })
  ).id;
  await app.admin.call('contacts.create', {
    accountId: child,
    email: `dispatch-${tag}@child.example`,
    apiAccess: false,
  });
  const job = (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId })).apiId;
  await app.admin.call('jobs.setStatus', { apiId: job, status: 'started' });
  const cid = `console-${tag}`;
  const sent = await app.http
    .post('/v3/commands')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: 'no-such-order' });
  assert.is(sent.status, 202, JSON.stringify(sent.body));
  const failed = await until(async () => {
    const { items } = await app.admin.query<{ items: Json[] }>('deliveries.list', { accountId: brand.accountId });
    return items.length >= 2 && items.every((d) => d.status === 'failed') ? items : undefined;
  }, 'failed deliveries');
  ids = { master, child, job, cid, failed: failed.find((d) => d.orderId === job)! };
});
test.after(() => app.worker.stop());

test('accounts.search finds an account by a part of a contact e-mail address, any case, and says which', async () => {
  const { items } = await app.admin.query<{ items: Json[] }>('accounts.search', { text: `DISPATCH-${tag}` });
  assert.equal(
    items.map((a) => [a.id, a.name, a.role, a.parentId, a.matchedEmails]),
    [[ids.child, `Child ${tag}`, 'partner', ids.master, [`dispatch-${tag}@child.example`]]],
  );
  const byName = await app.admin.query<{ items: Json[] }>('accounts.search', { text: tag });
  assert.equal(
    byName.items.map((a) => [a.name, a.matchedEmails]),
    [
      [`Child ${tag}`, []],
      [`Master ${tag}`, []],
    ],
  );
  const literal = await app.admin.query<{ items: Json[] }>('accounts.search', { text: '%_%' });
  assert.equal(literal.items, [], '% and _ are taken literally');
});

test('accounts.get shows the hierarchy, the contacts and the endpoints with their health', async () => {
  const master = await app.admin.query<Json>('accounts.get', { accountId: ids.master });
  assert.equal([master.parent, master.children.map((c: Json) => c.id)], [null, [ids.child]]);
  const child = await app.admin.query<Json>('accounts.get', { accountId: ids.child });
  assert.is(child.parent.id, ids.master);
  assert.equal(
    child.contacts.map((c: Json) => [c.email, c.apiAccess]),
    [[`dispatch-${tag}@child.example`, false]],
  );
  const own = await app.admin.query<Json>('accounts.get', { accountId: brand.accountId });
  assert.is(own.webhookConfigs.length, 1);
  assert.ok(own.webhookConfigs[0].failingSince, 'the refused endpoint is failing');
  assert.not.ok('signatureKey' in own.webhookConfigs[0]);
});

test('webhookConfigs.list shows failing endpoints of every account with their account name', async () => {
  const { items } = await app.admin.query<{ items: Json[] }>('webhookConfigs.list', { health: 'failing' });
  const mine = items.find((c) => c.accountId === brand.accountId);
  assert.ok(mine, 'the failing endpoint is listed');
  assert.equal([mine.accountName, mine.enabled, mine.disabledReason], ['brand account', true, null]);
  assert.ok(items.every((c) => c.failingSince && c.enabled));
  const disabled = await app.admin.query<{ items: Json[] }>('webhookConfigs.list', { health: 'disabled' });
  assert.ok(disabled.items.every((c) => !c.enabled));
});

test('deliveries.search finds a delivery by its order, its event, or its command _cid across accounts', async () => {
  const search = async (input: Json) =>
    (await app.admin.query<{ items: Json[] }>('deliveries.search', input)).items.map((d) => d.id);
  const byOrder = (await app.admin.query<{ items: Json[] }>('deliveries.search', { orderId: ids.job })).items;
  assert.ok(byOrder.length >= 2 && byOrder.every((d) => d.orderId === ids.job && d.accountId === brand.accountId));
  assert.ok(byOrder.some((d) => d.id === ids.failed.id));
  assert.equal(await search({ eventId: ids.failed.eventId }), [ids.failed.id]);
  const [byCid] = (await app.admin.query<{ items: Json[] }>('deliveries.search', { cid: ids.cid })).items;
  assert.equal([byCid?.eventType, byCid?.status, byCid?.accountId], ['CommandErrorEvent', 'failed', brand.accountId]);
  assert.equal(await search({ eventId: randomUUID() }), []);
  assert.equal(await search({ eventId: 'not-a-uuid' }), []);
  assert.equal(await search({ cid: 'nobody-sent-this' }), []);
});

test('the failed delivery found is redelivered: pending again', async () => {
  const before = await app.admin.query<Json>('deliveries.get', { deliveryId: ids.failed.id });
  assert.is(before.status, 'failed');
  await app.admin.call('deliveries.redeliver', { deliveryId: ids.failed.id });
  const again = await app.admin.query<Json>('deliveries.get', { deliveryId: ids.failed.id });
  // Pending again, or already tried again by the worker (and failed once more: its endpoint still fails).
  assert.ok(
    again.status === 'pending' || again.attempts.length > before.attempts.length,
    `redelivered: ${again.status}, ${again.attempts.length} attempts (${before.attempts.length} before)`,
  );
});

test('commands.find answers the commands of every account under a _cid, with the result', async () => {
  const { items } = await app.admin.query<{ items: Json[] }>('commands.find', { cid: ids.cid });
  assert.equal(
    items.map((c) => [c.accountId, c.cid, c.type, c.status, c.result?._type, c.result?.code]),
    [[brand.accountId, ids.cid, 'RefreshOrder', 'failed', 'CommandErrorEvent', 'ORDER_NOT_FOUND']],
  );
  assert.equal((await app.admin.query<{ items: Json[] }>('commands.find', { cid: 'nobody-sent-this' })).items, []);
});

test('jobs.get answers a job by its order id; an unknown one is 404', async () => {
  const job = await app.admin.query<Json>('jobs.get', { apiId: ids.job });
  assert.equal([job.apiId, job.status, job.brandAccountId], [ids.job, 'started', brand.accountId]);
  const res = await app.http
    .get(`/trpc/admin.jobs.get?input=${encodeURIComponent(JSON.stringify({ apiId: 'no-such-order' }))}`)
    .set('authorization', 'Bearer test-admin-token-0123456789');
  assert.equal([res.status, res.body.error.data.code], [404, 'NOT_FOUND']);
});

test('gauges.summary answers the gauges of GET /metrics, without the runtime ones', async () => {
  const { gauges } = await app.admin.query<{ gauges: Json[] }>('gauges.summary', {});
  const names = gauges.map((g) => g.name);
  for (const name of ['commands_oldest_accepted_age_seconds', 'webhook_endpoints_failing', 'db_pool_connections'])
    assert.ok(names.includes(name), name);
  assert.not.ok(names.some((n) => n.startsWith('nodejs_') || n.startsWith('process_')));
  const pool = gauges.find((g) => g.name === 'db_pool_connections')!;
  assert.ok(pool.help.length > 0);
  assert.ok(pool.samples.some((s: Json) => s.labels.state === 'max' && s.value >= 1));
});

/** Each new procedure: a valid input, an input with an unknown member, and one that breaks another rule. */
const inputs: Record<string, { valid: () => Json; unknown: () => Json; invalid: Json }> = {
  'accounts.search': {
    valid: () => ({ text: tag }),
    unknown: () => ({ text: tag, role: 'x' }),
    invalid: { text: ' ' },
  },
  'accounts.get': {
    valid: () => ({ accountId: ids.master }),
    unknown: () => ({ accountId: ids.master, deep: true }),
    invalid: {},
  },
  'webhookConfigs.list': {
    valid: () => ({ health: 'all' }),
    unknown: () => ({ health: 'all', url: 'x' }),
    invalid: { health: 'sick' },
  },
  'deliveries.search': {
    valid: () => ({ orderId: ids.job }),
    unknown: () => ({ orderId: ids.job, status: 'failed' }),
    invalid: { orderId: 'an-order', cid: 'a-cid' },
  },
  'commands.find': { valid: () => ({ cid: ids.cid }), unknown: () => ({ cid: ids.cid, accountId: 'x' }), invalid: {} },
  'jobs.get': { valid: () => ({ apiId: ids.job }), unknown: () => ({ apiId: ids.job, x: 1 }), invalid: { apiId: 7 } },
  'gauges.summary': { valid: () => ({}), unknown: () => ({ name: 'x' }), invalid: { name: 'x' } },
};

const get = (name: string, input: unknown, token: string | null = 'test-admin-token-0123456789') => {
  const req = app.http.get(`/trpc/admin.${name}?input=${encodeURIComponent(JSON.stringify(input))}`);
  return token === null ? req : req.set('authorization', `Bearer ${token}`);
};

for (const [name, c] of Object.entries(inputs)) {
  test(`${name}: an unknown member or a broken rule is 400 with issues`, async () => {
    for (const input of [c.unknown(), c.invalid]) {
      const res = await get(name, input);
      assert.is(res.status, 400, `${JSON.stringify(input)}: ${JSON.stringify(res.body)}`);
      assert.is(res.body.error.data.code, 'BAD_REQUEST');
      assert.ok(res.body.error.data.issues.length > 0);
    }
  });

  test(`${name}: without the admin token, or with a wrong one, 401 and nothing read`, async () => {
    for (const token of [null, 'wrong-token-0123456789', '']) {
      const res = await get(name, c.valid(), token);
      assert.is(res.status, 401);
      assert.is(res.body.error.data.code, 'UNAUTHORIZED');
      assert.not.ok(JSON.stringify(res.body).includes(tag), 'nothing of the data in the answer');
    }
  });

  test(`${name}: a query changes nothing`, async () => {
    const before = await snapshot(app.database);
    await get(name, c.valid());
    assert.equal(await snapshot(app.database), before);
  });
}

test('without ADMIN_TOKEN the console procedures are 401', async () => {
  const locked = await testApp({ ADMIN_TOKEN: '' });
  const res = await locked.http
    .get(`/trpc/admin.accounts.search?input=${encodeURIComponent(JSON.stringify({ text: 'x' }))}`)
    .set('authorization', 'Bearer anything-0123456789');
  assert.is(res.status, 401);
});

test.run();
