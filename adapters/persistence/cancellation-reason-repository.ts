import type { EntityManager } from '@mikro-orm/postgresql';
import { CancellationReason } from '../../domain/cancellation.ts';
import type { CancellationReasonRepository } from '../../domain/ports.ts';
import { DETACHED } from './detached.ts';

export class MikroOrmCancellationReasonRepository implements CancellationReasonRepository {
  constructor(private readonly em: EntityManager) {}
  get(name: string) { return this.em.findOne(CancellationReason, { name }, DETACHED); }
  async save(reason: CancellationReason) { await this.em.upsert(CancellationReason, reason, DETACHED); }
}
