import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assignJob } from '../../domain/use-cases/assign-job.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createInvoice } from '../../domain/use-cases/create-invoice.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { setJobStatus } from '../../domain/use-cases/set-job-status.ts';
import { upsertCancellationReason } from '../../domain/use-cases/upsert-cancellation-reason.ts';
import { upsertOrderMapping } from '../../domain/use-cases/upsert-order-mapping.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { type FakeDeps, fakeDeps } from '../fakes.ts';
import { rejectsWith } from './helpers.ts';

const test = suite('jobs and their events');

async function world(deps: FakeDeps) {
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  const master = await createAccount(deps, { name: 'Master', role: 'partner' });
  const child = await createAccount(deps, { name: 'Child', role: 'partner', parentId: master.id });
  const loner = await createAccount(deps, { name: 'Own config', role: 'partner', parentId: master.id });
  await upsertWebhookConfig(deps, {
    accountId: master.id,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.1.0',
  });
  await upsertWebhookConfig(deps, { accountId: loner.id, scope: 'partner', transformer: 'default', version: '1.0.0' });
  return { brand, master, child, loner };
}

test("creating a job emits one OrderStatusEvent per receiver, in each receiver's shape", async () => {
  const deps = fakeDeps();
  const { brand, master, child } = await world(deps);
  const job = await createJob(deps, { brandAccountId: brand.id, partnerId: child.id, status: 'open' });
  assert.match(job.name, /^O-\d{10}$/);
  assert.is(job.updatedAt.toISOString(), deps.clock.now().toISOString());

  const [toBrand] = await deps.events.recentFor(brand.id, 5);
  assert.equal(
    {
      type: toBrand?.type,
      scope: toBrand?.scope,
      v: toBrand?.payload._v,
      t: toBrand?.payload._type,
      order: toBrand?.payload.orderId,
      eid: toBrand?.payload._eid,
    },
    { type: 'OrderStatusEvent', scope: 'brand', v: '1.3.0', t: 'OrderStatusEvent', order: job.apiId, eid: toBrand?.id },
  );
  // The child has no configuration of its own: it receives in its master's shape and version.
  const [toChild] = await deps.events.recentFor(child.id, 5);
  assert.is(toChild?.payload.jobApiId, job.apiId);
  assert.is(toChild?.payload._v, '1.1.0');
  assert.ok(!('partnerId' in toChild!.payload));
  assert.equal(await deps.events.recentFor(master.id, 5), []);
});

test('a child with its own configuration receives in its own shape', async () => {
  const deps = fakeDeps();
  const { brand, loner } = await world(deps);
  await createJob(deps, { brandAccountId: brand.id, partnerId: loner.id });
  const [event] = await deps.events.recentFor(loner.id, 5);
  assert.is(event?.payload._v, '1.0.0');
  assert.ok('orderNumber' in event!.payload);
});

test('an unassigned job notifies only its brand', async () => {
  const deps = fakeDeps();
  const { brand } = await world(deps);
  await createJob(deps, { brandAccountId: brand.id });
  assert.is(deps.events.stored.length, 1);
  assert.is(deps.events.stored[0]?.accountId, brand.id);
});

test('reassignment: the new partner gets events from then on, the former one none', async () => {
  const deps = fakeDeps();
  const { brand, child, loner } = await world(deps);
  const job = await createJob(deps, { brandAccountId: brand.id, partnerId: child.id });
  deps.clock.advance(60);
  const moved = await assignJob(deps, { apiId: job.apiId, partnerId: loner.id });
  assert.is(moved.partnerId, loner.id);
  assert.ok(moved.updatedAt > job.updatedAt);
  await setJobStatus(deps, { apiId: job.apiId, status: 'accepted' });
  assert.is((await deps.events.recentFor(child.id, 10)).length, 1);
  const toLoner = await deps.events.recentFor(loner.id, 10);
  assert.equal(
    toLoner.map((e) => e.payload.status),
    ['accepted', 'new'],
  );
  assert.is((await deps.events.recentFor(brand.id, 10)).length, 3);
});

test('job references are checked: brand must be a brand, partner a partner, apiId unused', async () => {
  const deps = fakeDeps();
  const { brand, child } = await world(deps);
  await rejectsWith(createJob(deps, { brandAccountId: child.id }), 'VALIDATION_FAILED', 'brandAccountId');
  await rejectsWith(
    createJob(deps, { brandAccountId: brand.id, partnerId: brand.id }),
    'VALIDATION_FAILED',
    'partnerId',
  );
  await rejectsWith(createJob(deps, { brandAccountId: 'missing' }), 'NOT_FOUND');
  await createJob(deps, { brandAccountId: brand.id, apiId: 'fixed-1' });
  await rejectsWith(createJob(deps, { brandAccountId: brand.id, apiId: 'fixed-1' }), 'CONFLICT');
  await rejectsWith(assignJob(deps, { apiId: 'missing', partnerId: child.id }), 'NOT_FOUND');
  await rejectsWith(setJobStatus(deps, { apiId: 'missing', status: 'open' }), 'NOT_FOUND');
  assert.is(deps.jobs.all().length, 1);
});

test('invoices belong to an existing order', async () => {
  const deps = fakeDeps();
  const { brand } = await world(deps);
  const job = await createJob(deps, { brandAccountId: brand.id });
  const invoice = await createInvoice(deps, {
    orderId: job.apiId,
    number: 'R-1',
    type: 'invoice',
    status: 'sent',
    items: [],
  });
  assert.is((await deps.invoices.get(invoice.id))?.cancellationStatus, null);
  await rejectsWith(
    createInvoice(deps, { orderId: 'missing', number: 'R-2', type: 'invoice', status: 'sent', items: [] }),
    'NOT_FOUND',
  );
});

test('cancellation reasons: upsert by name, names in UPPER_SNAKE_CASE', async () => {
  const deps = fakeDeps();
  await upsertCancellationReason(deps, { name: 'CUSTOMER_WITHDREW', outcome: 'pending' });
  assert.is((await deps.cancellationReasons.get('CUSTOMER_WITHDREW'))?.outcome, 'pending');
  await rejectsWith(
    upsertCancellationReason(deps, { name: 'lower case', outcome: 'pending' }),
    'VALIDATION_FAILED',
    'name',
  );
});

test('order mappings: targets are order fields with explicit indexes; keys and targets unique', async () => {
  const deps = fakeDeps();
  const { brand, child } = await world(deps);
  const mapping = await upsertOrderMapping(deps, {
    brandAccountId: brand.id,
    fields: [
      { key: 'first', target: 'customer.firstName', required: true },
      { key: 'sku', target: 'products[0].sku', required: true },
      { key: 'qty', target: 'products[0].quantity', required: false },
      { key: 'file', target: 'documents[1].files[0].url', required: false },
      { key: 'ext', target: 'externalId', required: false },
    ],
  });
  assert.is((await deps.orderMappings.get(brand.id))?.fields.length, mapping.fields.length);
  await rejectsWith(
    upsertOrderMapping(deps, {
      brandAccountId: brand.id,
      fields: [{ key: 'x', target: 'products.sku', required: false }],
    }),
    'VALIDATION_FAILED',
    'fields.0.target',
  );
  await rejectsWith(
    upsertOrderMapping(deps, {
      brandAccountId: brand.id,
      fields: [{ key: 'x', target: 'customer.age', required: false }],
    }),
    'VALIDATION_FAILED',
    'fields.0.target',
  );
  await rejectsWith(
    upsertOrderMapping(deps, {
      brandAccountId: brand.id,
      fields: [
        { key: 'x', target: 'orderType', required: false },
        { key: 'x', target: 'projectId', required: false },
      ],
    }),
    'VALIDATION_FAILED',
    'fields.1.key',
  );
  await rejectsWith(
    upsertOrderMapping(deps, {
      brandAccountId: child.id,
      fields: [{ key: 'x', target: 'orderType', required: false }],
    }),
    'VALIDATION_FAILED',
    'brandAccountId',
  );
});

test.run();
