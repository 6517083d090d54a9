import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBrandCommand } from '../../../domain/brand-commands.ts';
import type { BrandCommand } from '../../../domain/command.ts';
import { createInvoice } from '../../../domain/use-cases/create-invoice.ts';
import { fakeDeps } from '../../fakes.ts';
import { envelope, failsWith, world } from './support.ts';

// What RefreshOrder, RefreshInvoice, UpdateCustomer and the external ids, and ApplyCancellation do to an order.
const test = suite('brand commands on the pure domain: what each command does');

test("RefreshOrder re-emits the OrderStatusEvent to the brand only; another brand's order does not exist", async () => {
  const deps = fakeDeps();
  const { brand, job, foreign } = await world(deps);
  assert.equal(
    await runBrandCommand(deps, brand.id, { ...envelope('RefreshOrder'), orderId: job.apiId } as BrandCommand),
    { orderId: job.apiId },
  );
  assert.equal(
    deps.events.stored.map((e) => [e.accountId, e.type, e.payload._v, e.deliver]),
    [[brand.id, 'OrderStatusEvent', '1.1.0', true]],
  );
  await failsWith(
    runBrandCommand(deps, brand.id, { ...envelope('RefreshOrder'), orderId: foreign.apiId } as BrandCommand),
    'ORDER_NOT_FOUND',
  );
  await failsWith(
    runBrandCommand(deps, brand.id, { ...envelope('RefreshOrder'), orderId: 'nothing' } as BrandCommand),
    'ORDER_NOT_FOUND',
  );
});

test("RefreshInvoice emits the InvoiceEvent in any state; another brand's invoice does not exist", async () => {
  const deps = fakeDeps();
  const { brand, job, foreign } = await world(deps);
  const invoice = await createInvoice(deps, {
    orderId: job.apiId,
    number: 'R-1',
    type: 'invoice',
    status: 'sent',
    items: [{ description: 'Box', quantity: 2, unitPrice: 10, total: 20 }],
  });
  const theirs = await createInvoice(deps, {
    orderId: foreign.apiId,
    number: 'R-2',
    type: 'invoice',
    status: 'sent',
    items: [],
  });
  const job2 = (await deps.jobs.get(job.apiId))!;
  job2.setStatus('closed', deps.clock.now());
  await deps.jobs.save(job2);
  assert.equal(
    await runBrandCommand(deps, brand.id, { ...envelope('RefreshInvoice'), invoiceId: invoice.id } as BrandCommand),
    { invoiceId: invoice.id },
  );
  const [event] = deps.events.stored;
  assert.equal(event!.payload, {
    _eid: event!.id,
    _type: 'InvoiceEvent',
    _v: '1.1.0',
    invoiceId: invoice.id,
    orderId: job.apiId,
    number: 'R-1',
    type: 'invoice',
    status: 'sent',
    cancellationStatus: null,
    items: [{ description: 'Box', quantity: 2, unitPrice: 10, total: 20 }],
  });
  await failsWith(
    runBrandCommand(deps, brand.id, { ...envelope('RefreshInvoice'), invoiceId: theirs.id } as BrandCommand),
    'INVOICE_NOT_FOUND',
  );
});

test('UpdateCustomer changes only the members given (null clears); the external ids replace theirs', async () => {
  const deps = fakeDeps();
  const { brand, job } = await world(deps);
  const run = (command: object) => runBrandCommand(deps, brand.id, command as BrandCommand);
  await run({
    ...envelope('UpdateCustomer'),
    orderId: job.apiId,
    customer: { firstName: 'Ada', email: 'ada@example.com' },
  });
  await run({ ...envelope('UpdateCustomer'), orderId: job.apiId, customer: { lastName: 'Lovelace', email: null } });
  await run({ ...envelope('UpdateOrderExternalId'), orderId: job.apiId, externalId: 'SHOP-1' });
  await run({ ...envelope('UpdateOrderInvoicingExternalId'), orderId: job.apiId, invoicingExternalId: 'INV-9' });
  const stored = (await deps.jobs.get(job.apiId))!;
  assert.equal(stored.customer, {
    email: null,
    externalId: null,
    firstName: 'Ada',
    lastName: 'Lovelace',
    mobilePhone: null,
    phone: null,
    salutation: null,
  });
  assert.equal([stored.eid, stored.invoicingEid], ['SHOP-1', 'INV-9']);
  assert.is(
    deps.events.stored.filter((e) => e.type === 'OrderStatusEvent').length,
    8,
    'brand and partner, four changes',
  );
});

test('ApplyCancellation: cancelled and pending reasons, pending again finishes it, terminal jobs and unknown reasons fail', async () => {
  const deps = fakeDeps();
  const { brand, job } = await world(deps);
  const cancel = (reason: string, orderId = job.apiId) =>
    runBrandCommand(deps, brand.id, {
      ...envelope('ApplyCancellation'),
      orderId,
      cancellationReason: reason,
    } as BrandCommand);
  await failsWith(cancel('NOT_A_REASON'), 'UNKNOWN_CANCELLATION_REASON');
  await cancel('CUSTOMER_UNREACHABLE');
  assert.is((await deps.jobs.get(job.apiId))!.status, 'brand_cancellation_pending');
  await cancel('TECHNICAL_INFEASIBILITY');
  assert.is(
    (await deps.jobs.get(job.apiId))!.status,
    'brand_cancellation_pending',
    'pending again applies the outcome again',
  );
  await cancel('CUSTOMER_WITHDREW');
  assert.is((await deps.jobs.get(job.apiId))!.status, 'cancelled');
  const before = deps.events.stored.length;
  await failsWith(cancel('CUSTOMER_WITHDREW'), 'INVALID_STATE');
  const error = await failsWith(
    runBrandCommand(deps, brand.id, {
      ...envelope('UpdateOrderExternalId'),
      orderId: job.apiId,
      externalId: 'x',
    } as BrandCommand),
    'INVALID_STATE',
  );
  assert.match(error.message, 'cancelled');
  assert.is(deps.events.stored.length, before, 'a refused command emits nothing');
});

test.run();
