import { conflict, invalid, notFound } from '../errors.ts';
import { Job, type JobProps } from '../job.ts';
import { emitOrderStatus } from '../order-events.ts';
import type { Deps } from '../ports.ts';

export type JobDeps = Pick<Deps, 'accounts' | 'jobs' | 'webhookConfigs' | 'events' | 'ids' | 'clock'>;

export type CreateJobInput = Partial<Omit<JobProps, 'brandAccountId' | 'createdAt'>> & { brandAccountId: string };

export async function createJob(deps: JobDeps, input: CreateJobInput): Promise<Job> {
  const brand = await deps.accounts.get(input.brandAccountId);
  if (!brand) throw notFound('The brand account');
  if (brand.role !== 'brand') throw invalid('brandAccountId', 'The account is not a brand account.');
  if (input.partnerId) await requirePartner(deps, input.partnerId);
  if (input.apiId && (await deps.jobs.get(input.apiId))) throw conflict('A job with this apiId exists already.');

  const now = deps.clock.now();
  const job = new Job({
    apiId: input.apiId ?? deps.ids.newId(),
    brandAccountId: brand.id,
    partnerId: input.partnerId ?? null,
    name: input.name ?? (await deps.jobs.nextOrderNumber()),
    status: input.status ?? 'new',
    invoicingEid: input.invoicingEid ?? null,
    eid: input.eid ?? null,
    extPartnerId: input.extPartnerId ?? null,
    customer: input.customer ?? null,
    customerBilling: input.customerBilling ?? null,
    shippingAddress: input.shippingAddress ?? null,
    products: input.products ?? [],
    documents: input.documents ?? [],
    orderType: input.orderType ?? null,
    projectId: input.projectId ?? null,
    projectName: input.projectName ?? null,
    appointmentStart: input.appointmentStart ?? null,
    appointmentEnd: input.appointmentEnd ?? null,
    startTimestamp: input.startTimestamp ?? null,
    finishTimestamp: input.finishTimestamp ?? null,
    createdAt: now,
    updatedAt: input.updatedAt ?? now,
  });
  await deps.jobs.save(job);
  await emitOrderStatus(deps, job);
  return job;
}

export async function requirePartner(deps: Pick<Deps, 'accounts'>, partnerId: string) {
  const partner = await deps.accounts.get(partnerId);
  if (!partner) throw notFound('The partner account');
  if (partner.role !== 'partner') throw invalid('partnerId', 'The account is not a partner account.');
  return partner;
}
