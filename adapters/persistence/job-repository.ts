import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import type { JobIdentifier } from '../../domain/command.ts';
import { Job } from '../../domain/job.ts';
import type { JobRepository } from '../../domain/ports.ts';

const JOB_FIELD = { jobApiId: 'apiId', invoicingEid: 'invoicingEid', gidOrderNumber: 'name', yourOrderID: 'extPartnerId' } as const;
// FOR UPDATE, re-read even when the unit of work has seen the job before: the lock is what makes the read current.
const FOR_CHANGE = { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } as const;

export class MikroOrmJobRepository implements JobRepository {
  constructor(private readonly em: EntityManager) {}
  get(apiId: string) { return this.em.findOne(Job, { apiId }); }
  getForChange(apiId: string) { return this.em.findOne(Job, { apiId }, FOR_CHANGE); }
  findByIdentifier(identifier: JobIdentifier, partnerIds: readonly string[], limit: number) {
    return this.em.find(Job, { [JOB_FIELD[identifier.kind]]: identifier.value, partnerId: { $in: [...partnerIds] } },
      { limit, orderBy: { apiId: 'asc' }, ...FOR_CHANGE });
  }
  async identifies(identifier: JobIdentifier) {
    return (await this.em.findOne(Job, { [JOB_FIELD[identifier.kind]]: identifier.value }, { fields: ['apiId'] })) !== null;
  }
  async save(job: Job) { this.em.persist(job); }
  async nextOrderNumber() {
    const [row] = await this.em.execute<{ n: string }[]>(`select nextval('order_number_seq')::text as n`);
    return `O-${row!.n.padStart(10, '0')}`;
  }
}
