import { raw, type EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../domain/account.ts';
import { CancellationReason } from '../../domain/cancellation.ts';
import type { JobIdentifier, StoredCommand } from '../../domain/command.ts';
import { Contact, normalizeEmail } from '../../domain/contact.ts';
import { OutboxEvent } from '../../domain/event.ts';
import { Invoice } from '../../domain/invoice.ts';
import { Job } from '../../domain/job.ts';
import { OrderMapping } from '../../domain/order-mapping.ts';
import type {
  AccountRepository, CancellationReasonRepository, CommandLog, ContactRepository, EventOutbox, InvoiceRepository, JobRepository,
  OrderMappingRepository, PartnerFamily, Repositories, WebhookConfigRepository,
} from '../../domain/ports.ts';
import { WebhookConfig, type Scope } from '../../domain/webhook-config.ts';
import { withDriverConnection } from './driver.ts';
import { SqlPartnerOrderQueries } from './partner-order-queries.ts';

// One round trip for everything that decides a polling scope (see PartnerFamily).
const PARTNER_FAMILY = `
  select a.id, a.name, a.role, a.parent_id, a.created_at,
    (select row_to_json(c) from webhook_configs c where c.account_id = a.id and c.scope = 'partner') as own_config,
    (select row_to_json(c) from webhook_configs c where c.account_id = a.parent_id and c.scope = 'partner') as master_config,
    array(select id::text from accounts where parent_id = a.id) as child_ids,
    array(select id::text from accounts where a.parent_id is not null and parent_id = a.parent_id) as sibling_ids
  from accounts a where a.id = $1`;

interface ConfigJson {
  id: string; account_id: string; scope: Scope; url: string | null; transformer: WebhookConfig['transformer'];
  version: WebhookConfig['version']; signature_key: string | null; enabled: boolean; created_at: string; updated_at: string;
}
interface FamilyRow {
  id: string; name: string; role: Account['role']; parent_id: string | null; created_at: string;
  own_config: ConfigJson | null; master_config: ConfigJson | null; child_ids: string[]; sibling_ids: string[];
}

const configFromJson = (c: ConfigJson | null) => c && new WebhookConfig({
  id: c.id, accountId: c.account_id, scope: c.scope, url: c.url, transformer: c.transformer, version: c.version,
  signatureKey: c.signature_key, enabled: c.enabled, createdAt: new Date(c.created_at), updatedAt: new Date(c.updated_at),
});

const JOB_FIELD = { jobApiId: 'apiId', invoicingEid: 'invoicingEid', gidOrderNumber: 'name', yourOrderID: 'extPartnerId' } as const;

// Each repository works on the unit of work's EntityManager: `save` only schedules the write, which
// the surrounding transaction flushes once at its end.

export class MikroOrmAccountRepository implements AccountRepository {
  constructor(private readonly em: EntityManager) {}
  get(id: string) { return this.em.findOne(Account, { id }); }
  partnerFamily(accountId: string): Promise<PartnerFamily | null> {
    return withDriverConnection(this.em, async (client) => {
      const { rows: [row] } = await client.query<FamilyRow>({ name: 'partner-family', text: PARTNER_FAMILY, values: [accountId] });
      if (!row) return null;
      return {
        account: new Account({ id: row.id, name: row.name, role: row.role, parentId: row.parent_id, createdAt: new Date(row.created_at) }),
        ownConfig: configFromJson(row.own_config),
        masterConfig: configFromJson(row.master_config),
        childIds: row.child_ids,
        siblingIds: row.sibling_ids,
      };
    });
  }
  async save(account: Account) { this.em.persist(account); }
}

export class MikroOrmContactRepository implements ContactRepository {
  constructor(private readonly em: EntityManager) {}
  get(id: string) { return this.em.findOne(Contact, { id }); }
  findByEmail(email: string) {
    return this.em.findOne(Contact, { [raw('lower(email)')]: normalizeEmail(email) });
  }
  accessOf(contactId: string) {
    return withDriverConnection(this.em, async (client) => {
      const { rows: [row] } = await client.query<{ account_id: string; api_access: boolean }>({
        name: 'contact-access', text: 'select account_id, api_access from contacts where id = $1', values: [contactId],
      });
      return row ? { accountId: row.account_id, apiAccess: row.api_access } : null;
    });
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

/** `_cid`s per account: INSERT … ON CONFLICT DO NOTHING takes one, and waits for a concurrent holder to finish. */
export class MikroOrmCommandLog implements CommandLog {
  constructor(private readonly em: EntityManager) {}

  async claim(command: Omit<StoredCommand, 'status' | 'answer'>, at: Date): Promise<StoredCommand | null> {
    const inserted = await this.em.execute<{ cid: string }[]>(
      `insert into commands (account_id, cid, type, body, status, answer, created_at, updated_at)
       values (?, ?, ?, ?::jsonb, 'accepted', null, ?, ?) on conflict (account_id, cid) do nothing returning cid`,
      [command.accountId, command.cid, command.type, JSON.stringify(command.body), at, at],
    );
    if (inserted.length > 0) return null;
    const [row] = await this.em.execute<{ type: string; body: unknown; status: StoredCommand['status']; answer: unknown }[]>(
      'select type, body, status, answer from commands where account_id = ? and cid = ?', [command.accountId, command.cid],
    );
    return { accountId: command.accountId, cid: command.cid, type: row!.type, body: json(row!.body), status: row!.status, answer: json(row!.answer) };
  }

  async complete(accountId: string, cid: string, status: StoredCommand['status'], answer: unknown, at: Date): Promise<void> {
    await this.em.execute('update commands set status = ?, answer = ?::jsonb, updated_at = ? where account_id = ? and cid = ?',
      [status, JSON.stringify(answer), at, accountId, cid]);
  }
}

// jsonb arrives parsed from the driver, or as text where the ORM's setup keeps it raw.
const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);

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
  commands: new MikroOrmCommandLog(em),
});
