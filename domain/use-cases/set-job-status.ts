import { notFound } from '../errors.ts';
import type { Job, JobStatus } from '../job.ts';
import { emitOrderStatus } from '../order-events.ts';
import type { JobDeps } from './create-job.ts';

export async function setJobStatus(deps: JobDeps, input: { apiId: string; status: JobStatus }): Promise<Job> {
  const job = await deps.jobs.getForChange(input.apiId);
  if (!job) throw notFound('The job');
  job.setStatus(input.status, deps.clock.now());
  await deps.jobs.save(job);
  await emitOrderStatus(deps, job);
  return job;
}
