import type { EntityManager } from '@mikro-orm/postgresql';
import { CancellationReason } from '../../domain/cancellation.ts';
import type { CancellationReasonRepository } from '../../domain/ports.ts';

export class MikroOrmCancellationReasonRepository implements CancellationReasonRepository {
  constructor(private readonly em: EntityManager) {}
  get(name: string) { return this.em.findOne(CancellationReason, { name }); }
  async save(reason: CancellationReason) { await this.em.upsert(CancellationReason, reason); }
}
