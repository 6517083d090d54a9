import { type BrandCommand, type BrandCommandType, CommandError, type CommandResult } from './command.ts';
import { Job } from './job.ts';
import { emitOrderStatus } from './order-events.ts';
import { type MappedOrder, mapOrder } from './order-mapping.ts';
import { renderInvoice } from './payloads.ts';
import type { Deps } from './ports.ts';
import { eventFor, receiverOf } from './receivers.ts';

export type BrandCommandDeps = Pick<
  Deps,
  | 'accounts'
  | 'webhookConfigs'
  | 'jobs'
  | 'invoices'
  | 'cancellationReasons'
  | 'orderMappings'
  | 'events'
  | 'ids'
  | 'clock'
>;
type Handler<C extends BrandCommand> = (deps: BrandCommandDeps, brandId: string, command: C) => Promise<CommandResult>;

/**
 * An id a command named, as its error message shows it: at most 100 characters (whole ones), then "…". An id that
 * names nothing may be of any length (up to the body's limit), and the message goes into the result event, whose size
 * is bounded: a longer one made the result unrecordable, and the command was claimed again after every lease.
 */
const shown = (id: string) => {
  const characters = Array.from(id);
  return characters.length <= 100 ? id : `${characters.slice(0, 100).join('')}…`;
};

/** The brand's own order, locked for change; another brand's is as absent as one that does not exist. */
async function ownOrder(deps: BrandCommandDeps, brandId: string, orderId: string): Promise<Job> {
  const job = await deps.jobs.getForChange(orderId);
  if (!job || job.brandAccountId !== brandId)
    throw new CommandError('ORDER_NOT_FOUND', `There is no order ${shown(orderId)} of yours.`);
  return job;
}

/** The brand's own order, which is not in a terminal state: a brand command may change it. */
async function changeableOrder(deps: BrandCommandDeps, brandId: string, orderId: string): Promise<Job> {
  const job = await ownOrder(deps, brandId, orderId);
  if (job.isTerminal())
    throw new CommandError('INVALID_STATE', `The order ${orderId} is ${job.status}; it can no longer be changed.`);
  return job;
}

/** Saves the changed order and emits its OrderStatusEvents. */
async function changed(deps: BrandCommandDeps, job: Job): Promise<CommandResult> {
  await deps.jobs.save(job);
  await emitOrderStatus(deps, job);
  return { orderId: job.apiId };
}

/**
 * What each brand command does (CONTRACT §5, §2): each checks first and changes after, so that a CommandError leaves
 * nothing behind. The table is exhaustive over the command types.
 */
const handlers: { [T in BrandCommandType]: Handler<Extract<BrandCommand, { _type: T }>> } = {
  async RefreshOrder(deps, brandId, command) {
    const job = await ownOrder(deps, brandId, command.orderId);
    await emitOrderStatus(deps, job, 'brand');
    return { orderId: job.apiId };
  },

  async RefreshInvoice(deps, brandId, command) {
    const invoice = await deps.invoices.get(command.invoiceId);
    // Under the order's row lock, like every change: its event is then stored in the order's commit order.
    const job = invoice && (await deps.jobs.getForChange(invoice.orderId));
    if (!invoice || job?.brandAccountId !== brandId)
      throw new CommandError('INVOICE_NOT_FOUND', `There is no invoice ${shown(command.invoiceId)} of yours.`);
    const brand = await receiverOf(deps, brandId, 'brand');
    await deps.events.add([
      eventFor(deps, brand, 'InvoiceEvent', invoice.orderId, (eid, format) =>
        renderInvoice(invoice, format.version, eid),
      ),
    ]);
    return { invoiceId: invoice.id };
  },

  async UpdateCustomer(deps, brandId, command) {
    const job = await changeableOrder(deps, brandId, command.orderId);
    job.updateCustomer(command.customer, deps.clock.now());
    return changed(deps, job);
  },

  async UpdateOrderExternalId(deps, brandId, command) {
    const job = await changeableOrder(deps, brandId, command.orderId);
    job.setEid(command.externalId, deps.clock.now());
    return changed(deps, job);
  },

  async UpdateOrderInvoicingExternalId(deps, brandId, command) {
    const job = await changeableOrder(deps, brandId, command.orderId);
    job.setInvoicingEid(command.invoicingExternalId, deps.clock.now());
    return changed(deps, job);
  },

  async ApplyCancellation(deps, brandId, command) {
    const reason = await deps.cancellationReasons.get(command.cancellationReason);
    if (!reason)
      throw new CommandError(
        'UNKNOWN_CANCELLATION_REASON',
        `"${command.cancellationReason}" is not a cancellation reason.`,
      );
    const job = await changeableOrder(deps, brandId, command.orderId);
    job.cancel(reason.outcome, deps.clock.now());
    return changed(deps, job);
  },

  async CreateOrderFromMapping(deps, brandId, command) {
    const mapping = await deps.orderMappings.get(brandId);
    if (!mapping)
      throw new CommandError('MAPPING_NOT_CONFIGURED', 'Your account has no order mapping; ask us to configure one.');
    const orders: MappedOrder[] = [];
    const problems: { key: string; message: string }[] = [];
    command.orders.forEach(({ mapping: items }, i) => {
      const mapped = mapOrder(mapping, items);
      if (mapped.order) orders.push(mapped.order);
      for (const p of mapped.problems) problems.push({ key: `orders[${i}].${p.key}`, message: p.message });
    });
    if (problems.length)
      throw new CommandError(
        'MAPPING_INVALID',
        `${problems.length} problem(s) in the mapping items; no order was created.`,
        problems,
      );
    const now = deps.clock.now();
    const orderIds: string[] = [];
    for (const fields of orders) {
      const job = new Job({
        ...fields,
        apiId: deps.ids.newId(),
        name: await deps.jobs.nextOrderNumber(),
        brandAccountId: brandId,
        partnerId: null,
        status: 'new',
        extPartnerId: null,
        appointmentStart: null,
        appointmentEnd: null,
        startTimestamp: null,
        finishTimestamp: null,
        createdAt: now,
        updatedAt: now,
      });
      await changed(deps, job);
      orderIds.push(job.apiId);
    }
    return { orderIds };
  },
};

/** Runs a brand command for the brand that sent it; a failure the sender can act on is a CommandError. */
export function runBrandCommand(
  deps: BrandCommandDeps,
  brandId: string,
  command: BrandCommand,
): Promise<CommandResult> {
  const handler = handlers[command._type] as Handler<BrandCommand>;
  return handler(deps, brandId, command);
}
