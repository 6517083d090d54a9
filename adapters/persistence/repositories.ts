import { raw, type EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../domain/account.ts';
import { CancellationReason } from '../../domain/cancellation.ts';
import { Contact, normalizeEmail } from '../../domain/contact.ts';
import { OutboxEvent } from '../../domain/event.ts';
import { Invoice } from '../../domain/invoice.ts';
import { Job } from '../../domain/job.ts';
import { OrderMapping } from '../../domain/order-mapping.ts';
import type {
  AccountRepository, CancellationReasonRepository, ContactRepository, EventOutbox, InvoiceRepository, JobRepository,
  OrderMappingRepository, Repositories, WebhookConfigRepository,
} from '../../domain/ports.ts';
import { WebhookConfig, type Scope } from '../../domain/webhook-config.ts';
import { SqlPartnerOrderQueries } from './partner-order-queries.ts';

// Each repository works on the unit of work's EntityManager: `save` only schedules the write, which
// the surrounding transaction flushes once at its end.

export class MikroOrmAccountRepository implements AccountRepository {
  constructor(private readonly em: EntityManager) {}
  get(id: string) { return this.em.findOne(Account, { id }); }
  async childIds(parentId: string) {
    const rows = await this.em.execute<{ id: string }[]>('select id from accounts where parent_id = ?', [parentId]);
    return rows.map((r) => r.id);
  }
  async save(account: Account) { this.em.persist(account); }
}

export class MikroOrmContactRepository implements ContactRepository {
  constructor(private readonly em: EntityManager) {}
  get(id: string) { return this.em.findOne(Contact, { id }); }
  findByEmail(email: string) {
    return this.em.findOne(Contact, { [raw('lower(email)')]: normalizeEmail(email) });
  }
  async save(contact: Contact) { this.em.persist(contact); }
}

export class MikroOrmWebhookConfigRepository implements WebhookConfigRepository {
  constructor(private readonly em: EntityManager) {}
  find(accountId: string, scope: Scope) { return this.em.findOne(WebhookConfig, { accountId, scope }); }
  async save(config: WebhookConfig) { this.em.persist(config); }
}

export class MikroOrmJobRepository implements JobRepository {
  constructor(private readonly em: EntityManager) {}
  get(apiId: string) { return this.em.findOne(Job, { apiId }); }
  async save(job: Job) { this.em.persist(job); }
  async nextOrderNumber() {
    const [row] = await this.em.execute<{ n: string }[]>(`select nextval('order_number_seq')::text as n`);
    return `O-${row!.n.padStart(10, '0')}`;
  }
}

export class MikroOrmInvoiceRepository implements InvoiceRepository {
  constructor(private readonly em: EntityManager) {}
  get(id: string) { return this.em.findOne(Invoice, { id }); }
  async save(invoice: Invoice) { this.em.persist(invoice); }
}

export class MikroOrmCancellationReasonRepository implements CancellationReasonRepository {
  constructor(private readonly em: EntityManager) {}
  get(name: string) { return this.em.findOne(CancellationReason, { name }); }
  async save(reason: CancellationReason) { await this.em.upsert(CancellationReason, reason); }
}

export class MikroOrmOrderMappingRepository implements OrderMappingRepository {
  constructor(private readonly em: EntityManager) {}
  get(brandAccountId: string) { return this.em.findOne(OrderMapping, { brandAccountId }); }
  async save(mapping: OrderMapping) { await this.em.upsert(OrderMapping, mapping); }
}

export class MikroOrmEventOutbox implements EventOutbox {
  constructor(private readonly em: EntityManager) {}
  async add(events: readonly OutboxEvent[]) { this.em.persist([...events]); }
  recentFor(accountId: string, limit: number) {
    return this.em.find(OutboxEvent, { accountId }, { orderBy: { [raw('seq')]: 'desc' }, limit });
  }
}

export const mikroOrmRepositories = (em: EntityManager): Repositories => ({
  accounts: new MikroOrmAccountRepository(em),
  contacts: new MikroOrmContactRepository(em),
  webhookConfigs: new MikroOrmWebhookConfigRepository(em),
  jobs: new MikroOrmJobRepository(em),
  partnerOrders: new SqlPartnerOrderQueries(em),
  invoices: new MikroOrmInvoiceRepository(em),
  cancellationReasons: new MikroOrmCancellationReasonRepository(em),
  orderMappings: new MikroOrmOrderMappingRepository(em),
  events: new MikroOrmEventOutbox(em),
});
