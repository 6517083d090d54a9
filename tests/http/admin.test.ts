import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { adminClient, testApp, uniqueEmail } from '../support/app.ts';
import { snapshot } from '../support/snapshot.ts';

type App = Awaited<ReturnType<typeof testApp>>;
const test = suite('admin procedures over /trpc');
let app: App;
let ids: { brand: string; master: string; child: string; contact: string; job: string };

test.before(async () => {
  app = await testApp({ TEST_CLOCK: '1' });
  const brand = (await app.admin.call<{ id: string }>('accounts.create', { name: 'Brand', role: 'brand' })).id;
  const master = (await app.admin.call<{ id: string }>('accounts.create', { name: 'Master', role: 'partner' })).id;
  const child = (
    await app.admin.call<{ id: string }>('accounts.create', { name: 'Child', role: 'partner', parentId: master })
  ).id;
  const contact = (await app.admin.call<{ id: string }>('contacts.create', { accountId: brand, email: uniqueEmail() }))
    .id;
  const job = (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand, partnerId: child }))
    .apiId;
  ids = { brand, master, child, contact, job };
});

/** For each procedure: a valid input, and an input that breaks one rule of it. */
const cases: Record<string, { valid: () => unknown; invalid: () => unknown; check: (data: any) => void }> = {
  'accounts.create': {
    valid: () => ({ name: 'Another child', role: 'partner', parentId: ids.master }),
    invalid: () => ({ name: 'Grandchild', role: 'partner', parentId: ids.child }),
    check: (d) => assert.match(d.id, /^[0-9a-f-]{36}$/),
  },
  'contacts.create': {
    valid: () => ({ accountId: ids.child, email: uniqueEmail('child'), apiAccess: false }),
    invalid: () => ({ accountId: ids.child, email: 'not an address' }),
    check: (d) => assert.match(d.id, /^[0-9a-f-]{36}$/),
  },
  'contacts.setApiAccess': {
    valid: () => ({ contactId: ids.contact, apiAccess: false }),
    invalid: () => ({ contactId: ids.contact, apiAccess: 'no' }),
    check: (d) => assert.equal(d, { ok: true }),
  },
  'webhookConfigs.upsert': {
    valid: () => ({
      accountId: ids.master,
      scope: 'partner',
      url: 'https://hooks.example.com/in',
      transformer: 'partner-format',
      version: '1.3.0',
      signatureKey: 'super-secret-key-0001',
    }),
    invalid: () => ({ accountId: ids.master, scope: 'partner', transformer: 'partner-format', version: '2.0.0' }),
    check: (d) =>
      assert.equal(d, {
        accountId: ids.master,
        scope: 'partner',
        url: 'https://hooks.example.com/in',
        transformer: 'partner-format',
        version: '1.3.0',
        enabled: true,
        hasSignatureKey: true,
        previousKeyExpiresAt: null,
        failingSince: null,
        disabledReason: null,
        asymmetricSigning: false,
        publicKey: null,
        previousPublicKey: null,
      }),
  },
  'jobs.create': {
    valid: () => ({
      brandAccountId: ids.brand,
      partnerId: ids.child,
      status: 'open',
      customer: { firstName: 'Ada' },
      startTimestamp: '2026-12-01T08:00:00+01:00',
    }),
    invalid: () => ({ brandAccountId: ids.brand, status: 'teleported' }),
    check: (d) => {
      assert.is(d.status, 'open');
      assert.is(d.brandAccountId, ids.brand);
      assert.is(d.partnerId, ids.child);
      assert.match(d.name, /^O-\d{10}$/);
      assert.is(d.startTimestamp, '2026-12-01T07:00:00.000Z');
      assert.equal(d.customer, {
        email: null,
        externalId: null,
        firstName: 'Ada',
        lastName: null,
        mobilePhone: null,
        phone: null,
        salutation: null,
      });
      assert.ok(!Number.isNaN(Date.parse(d.updatedAt)));
    },
  },
  'jobs.assign': {
    valid: () => ({ apiId: ids.job, partnerId: ids.master }),
    invalid: () => ({ apiId: ids.job, partnerId: ids.brand }),
    check: (d) => assert.is(d.partnerId, ids.master),
  },
  'jobs.setStatus': {
    valid: () => ({ apiId: ids.job, status: 'on hold' }),
    invalid: () => ({ apiId: ids.job, status: 'onhold' }),
    check: (d) => assert.is(d.status, 'on hold'),
  },
  'invoices.create': {
    valid: () => ({
      orderId: ids.job,
      number: 'R-2026-1',
      type: 'invoice',
      status: 'sent',
      items: [{ description: 'Install', quantity: 1, unitPrice: 10, total: 10 }],
    }),
    invalid: () => ({ orderId: ids.job, number: 'R-2026-2', type: 'receipt', status: 'sent', items: [] }),
    check: (d) => assert.match(d.id, /^[0-9a-f-]{36}$/),
  },
  'cancellationReasons.upsert': {
    valid: () => ({ name: 'WEATHER', outcome: 'pending' }),
    invalid: () => ({ name: 'WEATHER', outcome: 'maybe' }),
    check: (d) => assert.equal(d, { ok: true }),
  },
  'orderMappings.upsert': {
    valid: () => ({
      brandAccountId: ids.brand,
      fields: [{ key: 'vorname', target: 'customer.firstName', required: true }],
    }),
    invalid: () => ({ brandAccountId: ids.brand, fields: [{ key: 'vorname', target: 'customer.shoeSize' }] }),
    check: (d) => assert.equal(d, { ok: true }),
  },
  'testClock.advance': {
    valid: () => ({ seconds: 3600 }),
    invalid: () => ({ seconds: -5 }),
    check: (d) => assert.ok(Date.parse(d.now) > Date.now() + 3_500_000),
  },
};

for (const [name, c] of Object.entries(cases)) {
  test(`${name}: succeeds`, async () => {
    c.check(await app.admin.call(name, c.valid()));
  });

  test(`${name}: bad input is 400 with issues and changes nothing`, async () => {
    const before = await snapshot(app.database);
    const res = await app.admin.mutate(name, c.invalid());
    assert.is(res.status, 400, JSON.stringify(res.body));
    assert.is(res.body.error.data.code, 'BAD_REQUEST');
    assert.ok(res.body.error.data.issues.length > 0);
    assert.equal(await snapshot(app.database), before);
  });

  test(`${name}: missing or wrong admin token is 401 and changes nothing`, async () => {
    const before = await snapshot(app.database);
    for (const token of [null, 'wrong-token-0123456789', '']) {
      const res = await adminClient(app.http, token).mutate(name, c.valid());
      assert.is(res.status, 401);
      assert.is(res.body.error.data.code, 'UNAUTHORIZED');
    }
    assert.equal(await snapshot(app.database), before);
  });
}

test('jobs.setStatus emits an OrderStatusEvent to the brand and the assigned partner', async () => {
  const job = await app.admin.call<{ apiId: string }>('jobs.create', {
    brandAccountId: ids.brand,
    partnerId: ids.child,
  });
  await app.admin.call('jobs.setStatus', { apiId: job.apiId, status: 'started' });
  const [toBrand, toChild] = await app.services
    .unitOfWork()
    .transaction(async (d) => [
      (await d.events.recentFor(ids.brand, 1))[0],
      (await d.events.recentFor(ids.child, 1))[0],
    ]);
  assert.equal([toBrand?.payload.orderId, toBrand?.payload.status], [job.apiId, 'started']);
  assert.equal(
    [toChild?.payload.jobApiId, toChild?.payload.status, toChild?.payload._v],
    [job.apiId, 'started', '1.3.0'],
  );
});

test('a taken e-mail address is 409, whatever its case', async () => {
  const email = uniqueEmail('Taken');
  await app.admin.call('contacts.create', { accountId: ids.brand, email });
  const res = await app.admin.mutate('contacts.create', { accountId: ids.brand, email: email.toUpperCase() });
  assert.is(res.status, 409);
});

test('unknown references are 404', async () => {
  const res = await app.admin.mutate('jobs.assign', { apiId: 'no-such-job', partnerId: ids.child });
  assert.is(res.status, 404);
  assert.is(res.body.error.data.code, 'NOT_FOUND');
});

test('without TEST_CLOCK the test clock does not exist (404)', async () => {
  const plain = await testApp();
  const res = await plain.admin.mutate('testClock.advance', { seconds: 60 });
  assert.is(res.status, 404);
});

test('without ADMIN_TOKEN every admin procedure is 401', async () => {
  const locked = await testApp({ ADMIN_TOKEN: '' });
  const res = await locked.admin.mutate('accounts.create', { name: 'x', role: 'brand' });
  assert.is(res.status, 401);
});

test('a refused webhook URL is 400 for admins too', async () => {
  const strict = await testApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: '0' });
  for (const url of [
    'http://127.0.0.1/hook',
    'http://[::ffff:10.0.0.1]/',
    'http://169.254.169.254/latest',
    'http://[::7f00:1]/',
    'ftp://example.com/',
    'http://100.64.0.1/',
  ]) {
    const res = await strict.admin.mutate('webhookConfigs.upsert', {
      accountId: ids.brand,
      scope: 'brand',
      url,
      transformer: 'default',
      version: '1.3.0',
    });
    assert.is(res.status, 400, url);
    assert.is(res.body.error.data.issues[0].path, 'url');
  }
});

test.run();
