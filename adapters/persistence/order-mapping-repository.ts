import type { EntityManager } from '@mikro-orm/postgresql';
import { OrderMapping } from '../../domain/order-mapping.ts';
import type { OrderMappingRepository } from '../../domain/ports.ts';
import { DETACHED, UnitReads } from './detached.ts';
import { isStoredId } from './stored-ids.ts';

export class MikroOrmOrderMappingRepository implements OrderMappingRepository {
  constructor(private readonly em: EntityManager) {}
  private readonly reads = new UnitReads<OrderMapping>();
  async get(brandAccountId: string) {
    return isStoredId(brandAccountId)
      ? this.reads.get(brandAccountId, () => this.em.findOne(OrderMapping, { brandAccountId }, DETACHED))
      : null;
  }
  async save(mapping: OrderMapping) {
    await this.reads.writing(mapping.brandAccountId, () => this.em.upsert(OrderMapping, mapping, DETACHED));
  }
}
