import type { EntityManager } from '@mikro-orm/postgresql';
import { OrderMapping } from '../../domain/order-mapping.ts';
import type { OrderMappingRepository } from '../../domain/ports.ts';

export class MikroOrmOrderMappingRepository implements OrderMappingRepository {
  constructor(private readonly em: EntityManager) {}
  get(brandAccountId: string) { return this.em.findOne(OrderMapping, { brandAccountId }); }
  async save(mapping: OrderMapping) { await this.em.upsert(OrderMapping, mapping); }
}
