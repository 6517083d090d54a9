import { notFound } from '../errors.ts';
import type { Job } from '../job.ts';
import type { Deps } from '../ports.ts';

/** admin.jobs.get: a job by its order id (apiId), whoever's it is. */
export async function getJob(deps: Pick<Deps, 'jobs'>, apiId: string): Promise<Job> {
  const job = await deps.jobs.get(apiId);
  if (!job) throw notFound('The order');
  return job;
}
