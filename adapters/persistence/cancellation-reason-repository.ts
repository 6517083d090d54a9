import type { EntityManager } from '@mikro-orm/postgresql';
import { CancellationReason } from '../../domain/cancellation.ts';
import type { CancellationReasonRepository } from '../../domain/ports.ts';
import { DETACHED, UnitReads } from './detached.ts';

export class MikroOrmCancellationReasonRepository implements CancellationReasonRepository {
  constructor(private readonly em: EntityManager) {}
  private readonly reads = new UnitReads<CancellationReason>();
  get(name: string) {
    return this.reads.get(name, () => this.em.findOne(CancellationReason, { name }, DETACHED));
  }
  async save(reason: CancellationReason) {
    await this.reads.writing(reason.name, () => this.em.upsert(CancellationReason, reason, DETACHED));
  }
}
