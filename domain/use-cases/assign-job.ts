import { notFound } from '../errors.ts';
import type { Job } from '../job.ts';
import { emitOrderStatus } from '../order-events.ts';
import { type JobDeps, requirePartner } from './create-job.ts';

/** The new partner gets the job's events from now on; the former one gets none, this one included. */
export async function assignJob(deps: JobDeps, input: { apiId: string; partnerId: string }): Promise<Job> {
  const job = await deps.jobs.getForChange(input.apiId);
  if (!job) throw notFound('The job');
  await requirePartner(deps, input.partnerId);
  job.assignTo(input.partnerId, deps.clock.now());
  await deps.jobs.save(job);
  await emitOrderStatus(deps, job);
  return job;
}
