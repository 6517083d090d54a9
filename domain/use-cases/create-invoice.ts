import { invalid, notFound } from '../errors.ts';
import { Invoice, type InvoiceProps } from '../invoice.ts';
import type { Deps } from '../ports.ts';

export type CreateInvoiceInput = Omit<InvoiceProps, 'id' | 'createdAt' | 'updatedAt' | 'cancellationStatus'> &
  Partial<Pick<InvoiceProps, 'cancellationStatus'>>;

export async function createInvoice(
  deps: Pick<Deps, 'jobs' | 'invoices' | 'clock' | 'ids'>,
  input: CreateInvoiceInput,
): Promise<Invoice> {
  if (!(await deps.jobs.get(input.orderId))) throw notFound('The order');
  if (!input.number.trim()) throw invalid('number', 'An invoice number is required.');
  const now = deps.clock.now();
  const invoice = new Invoice({
    ...input,
    id: deps.ids.newId(),
    cancellationStatus: input.cancellationStatus ?? null,
    createdAt: now,
    updatedAt: now,
  });
  await deps.invoices.save(invoice);
  return invoice;
}
