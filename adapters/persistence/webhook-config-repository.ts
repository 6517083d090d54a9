import type { EntityManager } from '@mikro-orm/postgresql';
import type { WebhookConfigRepository } from '../../domain/ports.ts';
import { WebhookConfig, type Scope } from '../../domain/webhook-config.ts';

export class MikroOrmWebhookConfigRepository implements WebhookConfigRepository {
  constructor(private readonly em: EntityManager) {}
  find(accountId: string, scope: Scope) { return this.em.findOne(WebhookConfig, { accountId, scope }); }
  async save(config: WebhookConfig) { this.em.persist(config); }
}
