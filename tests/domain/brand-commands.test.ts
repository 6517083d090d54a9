import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBrandCommand } from '../../domain/brand-commands.ts';
import { CommandError, type BrandCommand, type CommandErrorCode } from '../../domain/command.ts';
import { DomainError } from '../../domain/errors.ts';
import { mapOrder, OrderMapping } from '../../domain/order-mapping.ts';
import { acceptCommand } from '../../domain/use-cases/accept-command.ts';
import { claimDueCommands } from '../../domain/use-cases/claim-due-commands.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { createInvoice } from '../../domain/use-cases/create-invoice.ts';
import { createJob } from '../../domain/use-cases/create-job.ts';
import { executeCommand, executeCommands, type RunInUnit } from '../../domain/use-cases/execute-command.ts';
import { pollCommandResult } from '../../domain/use-cases/poll-command-result.ts';
import { purgeCommandResults } from '../../domain/use-cases/purge-command-results.ts';
import { upsertOrderMapping } from '../../domain/use-cases/upsert-order-mapping.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import { fakeDeps, type FakeDeps } from '../fakes.ts';
import { rejectsWith } from './helpers.ts';

const test = suite('brand commands on the pure domain');
const envelope = (type: string, cid = `cid-${type}`) => ({ _v: '1.0.0' as const, _cid: cid, _type: type });

async function world(deps: FakeDeps) {
  const brand = await createAccount(deps, { name: 'Brand', role: 'brand' });
  const other = await createAccount(deps, { name: 'Other brand', role: 'brand' });
  const partner = await createAccount(deps, { name: 'Partner', role: 'partner' });
  await upsertWebhookConfig(deps, { accountId: brand.id, scope: 'brand', url: 'https://hooks.example.com/b', transformer: 'default', version: '1.1.0' });
  const job = await createJob(deps, { brandAccountId: brand.id, partnerId: partner.id, status: 'accepted' });
  const foreign = await createJob(deps, { brandAccountId: other.id, status: 'accepted' });
  deps.events.stored.length = 0;
  return { brand, other, partner, job, foreign };
}

async function failsWith(promise: Promise<unknown>, code: CommandErrorCode) {
  const error = await promise.then(() => null, (e: unknown) => e);
  assert.instance(error, CommandError, `expected ${code}, got ${String(error)}`);
  assert.is((error as CommandError).code, code);
  return error as CommandError;
}

test('RefreshOrder re-emits the OrderStatusEvent to the brand only; another brand\'s order does not exist', async () => {
  const deps = fakeDeps();
  const { brand, job, foreign } = await world(deps);
  assert.equal(await runBrandCommand(deps, brand.id, { ...envelope('RefreshOrder'), orderId: job.apiId } as BrandCommand), { orderId: job.apiId });
  assert.equal(deps.events.stored.map((e) => [e.accountId, e.type, e.payload._v, e.deliver]), [[brand.id, 'OrderStatusEvent', '1.1.0', true]]);
  await failsWith(runBrandCommand(deps, brand.id, { ...envelope('RefreshOrder'), orderId: foreign.apiId } as BrandCommand), 'ORDER_NOT_FOUND');
  await failsWith(runBrandCommand(deps, brand.id, { ...envelope('RefreshOrder'), orderId: 'nothing' } as BrandCommand), 'ORDER_NOT_FOUND');
});

test('RefreshInvoice emits the InvoiceEvent in any state; another brand\'s invoice does not exist', async () => {
  const deps = fakeDeps();
  const { brand, job, foreign } = await world(deps);
  const invoice = await createInvoice(deps, { orderId: job.apiId, number: 'R-1', type: 'invoice', status: 'sent', items: [{ description: 'Box', quantity: 2, unitPrice: 10, total: 20 }] });
  const theirs = await createInvoice(deps, { orderId: foreign.apiId, number: 'R-2', type: 'invoice', status: 'sent', items: [] });
  const job2 = (await deps.jobs.get(job.apiId))!;
  job2.setStatus('closed', deps.clock.now());
  await deps.jobs.save(job2);
  assert.equal(await runBrandCommand(deps, brand.id, { ...envelope('RefreshInvoice'), invoiceId: invoice.id } as BrandCommand), { invoiceId: invoice.id });
  const [event] = deps.events.stored;
  assert.equal(event!.payload, {
    _eid: event!.id, _type: 'InvoiceEvent', _v: '1.1.0', invoiceId: invoice.id, orderId: job.apiId, number: 'R-1', type: 'invoice',
    status: 'sent', cancellationStatus: null, items: [{ description: 'Box', quantity: 2, unitPrice: 10, total: 20 }],
  });
  await failsWith(runBrandCommand(deps, brand.id, { ...envelope('RefreshInvoice'), invoiceId: theirs.id } as BrandCommand), 'INVOICE_NOT_FOUND');
});

test('UpdateCustomer changes only the members given (null clears); the external ids replace theirs', async () => {
  const deps = fakeDeps();
  const { brand, job } = await world(deps);
  const run = (command: object) => runBrandCommand(deps, brand.id, command as BrandCommand);
  await run({ ...envelope('UpdateCustomer'), orderId: job.apiId, customer: { firstName: 'Ada', email: 'ada@example.com' } });
  await run({ ...envelope('UpdateCustomer'), orderId: job.apiId, customer: { lastName: 'Lovelace', email: null } });
  await run({ ...envelope('UpdateOrderExternalId'), orderId: job.apiId, externalId: 'SHOP-1' });
  await run({ ...envelope('UpdateOrderInvoicingExternalId'), orderId: job.apiId, invoicingExternalId: 'INV-9' });
  const stored = (await deps.jobs.get(job.apiId))!;
  assert.equal(stored.customer, { email: null, externalId: null, firstName: 'Ada', lastName: 'Lovelace', mobilePhone: null, phone: null, salutation: null });
  assert.equal([stored.eid, stored.invoicingEid], ['SHOP-1', 'INV-9']);
  assert.is(deps.events.stored.filter((e) => e.type === 'OrderStatusEvent').length, 8, 'brand and partner, four changes');
});

test('ApplyCancellation: cancelled and pending reasons, pending again finishes it, terminal jobs and unknown reasons fail', async () => {
  const deps = fakeDeps();
  const { brand, job } = await world(deps);
  const cancel = (reason: string, orderId = job.apiId) =>
    runBrandCommand(deps, brand.id, { ...envelope('ApplyCancellation'), orderId, cancellationReason: reason } as BrandCommand);
  await failsWith(cancel('NOT_A_REASON'), 'UNKNOWN_CANCELLATION_REASON');
  await cancel('CUSTOMER_UNREACHABLE');
  assert.is((await deps.jobs.get(job.apiId))!.status, 'brand_cancellation_pending');
  await cancel('TECHNICAL_INFEASIBILITY');
  assert.is((await deps.jobs.get(job.apiId))!.status, 'brand_cancellation_pending', 'pending again applies the outcome again');
  await cancel('CUSTOMER_WITHDREW');
  assert.is((await deps.jobs.get(job.apiId))!.status, 'cancelled');
  const before = deps.events.stored.length;
  await failsWith(cancel('CUSTOMER_WITHDREW'), 'INVALID_STATE');
  const error = await failsWith(runBrandCommand(deps, brand.id, { ...envelope('UpdateOrderExternalId'), orderId: job.apiId, externalId: 'x' } as BrandCommand), 'INVALID_STATE');
  assert.match(error.message, 'cancelled');
  assert.is(deps.events.stored.length, before, 'a refused command emits nothing');
});

test('order mapping: dotted paths with list indexes, every problem under the brand\'s own key', () => {
  const mapping = OrderMapping.create('b', [
    { key: 'first', target: 'customer.firstName', required: true },
    { key: 'mail', target: 'customer.email', required: false },
    { key: 'city', target: 'shippingAddress.city', required: true },
    { key: 'country', target: 'shippingAddress.countryCode', required: false },
    { key: 'sku2', target: 'products[2].sku', required: false },
    { key: 'sku0', target: 'products[0].sku', required: false },
    { key: 'qty0', target: 'products[0].quantity', required: false },
    { key: 'photo', target: 'documents[0].files[1].url', required: false },
    { key: 'ext', target: 'externalId', required: false },
  ], new Date());
  const ok = mapOrder(mapping, [
    { key: 'first', value: 'Ada' }, { key: 'city', value: 'Berlin' }, { key: 'sku2', value: 'C' }, { key: 'sku0', value: 'A' },
    { key: 'qty0', value: '3' }, { key: 'photo', value: 'https://files.example.com/p.jpg' }, { key: 'ext', value: 'SHOP-7' },
  ]);
  assert.equal(ok.problems, []);
  assert.equal(ok.order?.customer, { email: null, externalId: null, firstName: 'Ada', lastName: null, mobilePhone: null, phone: null, salutation: null });
  assert.equal(ok.order?.shippingAddress, { street: null, houseNumber: null, postalCode: null, city: 'Berlin', countryCode: null });
  assert.equal(ok.order?.products, [{ sku: 'A', name: null, quantity: 3 }, { sku: 'C', name: null, quantity: null }], 'index order, gaps left out');
  assert.equal(ok.order?.documents, [{ type: null, files: [{ name: null, url: 'https://files.example.com/p.jpg' }] }]);
  assert.is(ok.order?.eid, 'SHOP-7');

  const bad = mapOrder(mapping, [
    { key: 'mail', value: 'not-an-address' }, { key: 'country', value: 'Germany' }, { key: 'qty0', value: '-1' },
    { key: 'unknown', value: 'x' }, { key: 'city', value: 'A' }, { key: 'city', value: 'B' }, { key: 'sku0', value: '  ' },
  ]);
  assert.equal(bad.order, null);
  assert.equal(bad.problems.map((p) => p.key).sort(), ['city', 'country', 'first', 'mail', 'qty0', 'sku0', 'unknown']);
});

test('CreateOrderFromMapping: all or nothing, orders in input order, MAPPING_NOT_CONFIGURED without a mapping', async () => {
  const deps = fakeDeps();
  const { brand, other } = await world(deps);
  const create = (brandId: string, orders: { key: string; value: string }[][]) =>
    runBrandCommand(deps, brandId, { ...envelope('CreateOrderFromMapping'), orders: orders.map((mapping) => ({ mapping })) } as BrandCommand);
  await failsWith(create(brand.id, [[{ key: 'city', value: 'Berlin' }]]), 'MAPPING_NOT_CONFIGURED');
  await upsertOrderMapping(deps, { brandAccountId: brand.id, fields: [{ key: 'city', target: 'shippingAddress.city', required: true }, { key: 'n', target: 'projectName', required: false }] });
  const jobsBefore = deps.jobs.all().length;
  const error = await failsWith(create(brand.id, [[{ key: 'city', value: 'A' }], [{ key: 'n', value: 'x' }], [{ key: 'zip', value: '1' }, { key: 'city', value: 'C' }]]), 'MAPPING_INVALID');
  assert.equal(error.details, [{ key: 'orders[1].city', message: 'is required' }, { key: 'orders[2].zip', message: 'is not a key of your order mapping' }]);
  assert.is(deps.jobs.all().length, jobsBefore, 'nothing created');
  const result = await create(brand.id, [[{ key: 'city', value: 'A' }], [{ key: 'city', value: 'B' }, { key: 'n', value: 'P' }]]);
  const ids = (result as { orderIds: string[] }).orderIds;
  assert.equal(ids.map((id) => deps.jobs.all().find((j) => j.apiId === id)?.shippingAddress?.city), ['A', 'B']);
  for (const id of ids) {
    const job = deps.jobs.all().find((j) => j.apiId === id)!;
    assert.equal([job.status, job.partnerId, job.brandAccountId], ['new', null, brand.id]);
    assert.match(job.name, /^O-\d{10}$/);
  }
  await failsWith(create(other.id, [[{ key: 'city', value: 'A' }]]), 'MAPPING_NOT_CONFIGURED');
});

/** Runs work directly on the fakes: no rollback here, which the executor's story does not need for these cases. */
const direct = (deps: FakeDeps): RunInUnit => (work) => work(deps);
const principal = (accountId: string) => ({ accountId, contactId: 'c', role: 'brand' as const });

test('the executor: accepted → run once → result polled; a failure becomes a CommandErrorEvent; replays run nothing', async () => {
  const deps = fakeDeps();
  const { brand, job } = await world(deps);
  const command = { ...envelope('RefreshOrder', 'x-1'), orderId: job.apiId } as BrandCommand;
  assert.equal(await acceptCommand(deps, principal(brand.id), command), { _cid: 'x-1', _type: 'RefreshOrder', status: 'accepted' });
  assert.is(await pollCommandResult(deps, principal(brand.id), 'x-1'), null);
  const [claimed] = await claimDueCommands(deps, 10, 60_000);
  assert.equal(await executeCommand(direct(deps), claimed!, { maxAttempts: 3, retryDelayMs: 1000 }), { outcome: 'succeeded' });
  const result = await pollCommandResult(deps, principal(brand.id), 'x-1');
  assert.equal({ ...result, _eid: undefined }, { _eid: undefined, _type: 'CommandResultEvent', _v: '1.1.0', _cid: 'x-1', commandType: 'RefreshOrder', _metadata: {}, result: { orderId: job.apiId } });
  assert.ok(deps.events.stored.some((e) => e.type === 'CommandResultEvent' && e.payload._eid === result!._eid && e.accountId === brand.id));
  assert.equal(await claimDueCommands(deps, 10, 60_000), [], 'nothing left');
  assert.equal(await acceptCommand(deps, principal(brand.id), command), { _cid: 'x-1', _type: 'RefreshOrder', status: 'accepted' });
  await rejectsWith(acceptCommand(deps, principal(brand.id), { ...command, orderId: 'other' } as BrandCommand), 'CONFLICT');
  await rejectsWith(pollCommandResult(deps, principal('someone-else'), 'x-1'), 'NOT_FOUND');

  await acceptCommand(deps, principal(brand.id), { ...envelope('RefreshOrder', 'x-2'), _metadata: { 'ext-ref': 'r' }, orderId: 'missing' } as BrandCommand);
  const [second] = await claimDueCommands(deps, 10, 60_000);
  assert.equal(await executeCommand(direct(deps), second!, { maxAttempts: 3, retryDelayMs: 1000 }), { outcome: 'failed', code: 'ORDER_NOT_FOUND' });
  const failed = await pollCommandResult(deps, principal(brand.id), 'x-2');
  assert.equal([failed?._type, failed?.code, failed?.details, failed?._metadata], ['CommandErrorEvent', 'ORDER_NOT_FOUND', null, { 'ext-ref': 'r' }]);
});

test('the executor: the database away never ends a command nor uses up its attempts; it waits and runs once it is back', async () => {
  const deps = fakeDeps();
  const { brand, job } = await world(deps);
  const away: FakeDeps = { ...deps, jobs: Object.assign(Object.create(deps.jobs), { getForChange: async () => { throw new DomainError('UNAVAILABLE', 'away', [], 5); } }) };
  const broken: FakeDeps = { ...deps, jobs: Object.assign(Object.create(deps.jobs), { getForChange: async () => { throw new Error('a fault of ours'); } }) };
  await acceptCommand(deps, principal(brand.id), { ...envelope('RefreshOrder', 'u-1'), orderId: job.apiId } as BrandCommand);
  const policy = { maxAttempts: 2, retryDelayMs: 5000 };
  for (let outage = 1; outage <= 3; outage++) {
    const [claimed] = await claimDueCommands(deps, 10, 60_000);
    assert.is(claimed!.attempts, 1, `claim ${outage}: an outage used no attempt`);
    assert.is((await executeCommand(direct(away), claimed!, policy)).outcome, 'retry', `claim ${outage}: no INTERNAL_ERROR for an outage`);
    deps.clock.advance(5);
  }
  // Its first real attempt fails unexpectedly: with 2 attempts, it is tried again, not given up.
  const [faulty] = await claimDueCommands(deps, 10, 60_000);
  assert.is((await executeCommand(direct(broken), faulty!, policy)).outcome, 'retry');
  deps.clock.advance(5);
  const [back] = await claimDueCommands(deps, 10, 60_000);
  assert.is(back!.attempts, 2);
  assert.is((await executeCommand(direct(deps), back!, policy)).outcome, 'succeeded');
  assert.is((await pollCommandResult(deps, principal(brand.id), 'u-1'))?._type, 'CommandResultEvent');
});

test('the executor: an unexpected failure is retried, then ends as INTERNAL_ERROR without its text; results go after 24 h', async () => {
  const deps = fakeDeps();
  const { brand, job } = await world(deps);
  const broken: FakeDeps = { ...deps, jobs: Object.assign(Object.create(deps.jobs), { getForChange: async () => { throw new Error('db-primary.internal:5432 timed out'); } }) };
  await acceptCommand(deps, principal(brand.id), { ...envelope('RefreshOrder', 'y-1'), orderId: job.apiId } as BrandCommand);
  const policy = { maxAttempts: 2, retryDelayMs: 5000 };
  const [first] = await claimDueCommands(deps, 10, 60_000);
  const retry = await executeCommand(direct(broken), first!, policy);
  assert.is(retry.outcome, 'retry');
  assert.equal(await claimDueCommands(deps, 10, 60_000), [], 'not before the retry delay');
  deps.clock.advance(5);
  const [again] = await claimDueCommands(deps, 10, 60_000);
  assert.is(again!.attempts, 2);
  assert.is((await executeCommand(direct(broken), again!, policy)).outcome, 'gave up');
  const result = await pollCommandResult(deps, principal(brand.id), 'y-1');
  assert.equal([result?.code, result?.message], ['INTERNAL_ERROR', 'The command could not be executed because of an internal error.']);
  assert.not.match(JSON.stringify(result), /db-primary|5432/);

  deps.clock.advance(24 * 3600 - 1);
  assert.ok(await pollCommandResult(deps, principal(brand.id), 'y-1'));
  assert.is(await purgeCommandResults(deps, 100), 0, 'a result younger than 24 h is not purged');
  assert.is((await deps.commands.result(brand.id, 'y-1'))?.status, 'failed');
  deps.clock.advance(1);
  await rejectsWith(pollCommandResult(deps, principal(brand.id), 'y-1'), 'NOT_FOUND');
  assert.is(await purgeCommandResults(deps, 100), 1);
  assert.is(await deps.commands.result(brand.id, 'y-1'), null);
});

test('a batch locks every order it changes first, its invoice\'s included (two batches would deadlock otherwise), then runs in acceptance order', async () => {
  const deps = fakeDeps();
  const { brand } = await world(deps);
  const [low, high, billed] = [await createJob(deps, { brandAccountId: brand.id }), await createJob(deps, { brandAccountId: brand.id }), await createJob(deps, { brandAccountId: brand.id })];
  const invoice = await createInvoice(deps, { orderId: billed!.apiId, number: 'R-9', type: 'invoice', status: 'sent', items: [] });
  const sent = [
    { ...envelope('UpdateOrderExternalId', 'b-1'), orderId: high!.apiId, externalId: 'first' },
    { ...envelope('RefreshInvoice', 'b-2'), invoiceId: invoice.id },
    { ...envelope('RefreshOrder', 'b-3'), orderId: low!.apiId },
    { ...envelope('UpdateOrderExternalId', 'b-4'), orderId: high!.apiId, externalId: 'second' },
  ] as BrandCommand[];
  for (const command of sent) await acceptCommand(deps, principal(brand.id), command);
  const taken: string[] = [];
  const jobs = Object.assign(Object.create(deps.jobs), {
    lockForChange: async (apiIds: readonly string[]) => { taken.push(`all:${[...apiIds].sort().join(',')}`); },
    getForChange: (apiId: string) => { taken.push(apiId); return deps.jobs.getForChange(apiId); },
  });
  const claimed = await claimDueCommands(deps, 10, 60_000);
  assert.equal(claimed.map((c) => c.cid), ['b-1', 'b-2', 'b-3', 'b-4'], 'claimed in acceptance order');
  const executions = await executeCommands(direct({ ...deps, jobs }), claimed, { maxAttempts: 3, retryDelayMs: 1000 });
  assert.equal(taken, [`all:${[low!.apiId, high!.apiId, billed!.apiId].sort().join(',')}`, high!.apiId, billed!.apiId, low!.apiId, high!.apiId]);
  assert.equal(executions.map((e) => e.outcome), ['succeeded', 'succeeded', 'succeeded', 'succeeded']);
  assert.is((await deps.jobs.get(high!.apiId))?.eid, 'second', 'the later change of one order last');
});

test.run();
