import { raw, type EntityManager } from '@mikro-orm/postgresql';
import { OutboxEvent } from '../../domain/event.ts';
import type { EventOutbox } from '../../domain/ports.ts';

export class MikroOrmEventOutbox implements EventOutbox {
  constructor(private readonly em: EntityManager) {}
  async add(events: readonly OutboxEvent[]) { this.em.persist([...events]); }
  recentFor(accountId: string, limit: number) {
    return this.em.find(OutboxEvent, { accountId }, { orderBy: { [raw('seq')]: 'desc' }, limit });
  }
}

