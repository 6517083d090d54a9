import type { EntityManager } from '@mikro-orm/postgresql';
import { OrderMapping } from '../../domain/order-mapping.ts';
import type { OrderMappingRepository } from '../../domain/ports.ts';
import { DETACHED } from './detached.ts';
import { isStoredId } from './stored-ids.ts';

export class MikroOrmOrderMappingRepository implements OrderMappingRepository {
  constructor(private readonly em: EntityManager) {}
  async get(brandAccountId: string) { return isStoredId(brandAccountId) ? this.em.findOne(OrderMapping, { brandAccountId }, DETACHED) : null; }
  async save(mapping: OrderMapping) { await this.em.upsert(OrderMapping, mapping, DETACHED); }
}
