import type { EntityManager } from '@mikro-orm/postgresql';
import type { JobIdentifier } from '../../domain/command.ts';
import { Job } from '../../domain/job.ts';
import type { JobRepository } from '../../domain/ports.ts';

const JOB_FIELD = { jobApiId: 'apiId', invoicingEid: 'invoicingEid', gidOrderNumber: 'name', yourOrderID: 'extPartnerId' } as const;

export class MikroOrmJobRepository implements JobRepository {
  constructor(private readonly em: EntityManager) {}
  get(apiId: string) { return this.em.findOne(Job, { apiId }); }
  findByIdentifier(identifier: JobIdentifier, partnerIds: readonly string[], limit: number) {
    return this.em.find(Job, { [JOB_FIELD[identifier.kind]]: identifier.value, partnerId: { $in: [...partnerIds] } }, { limit, orderBy: { apiId: 'asc' } });
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
