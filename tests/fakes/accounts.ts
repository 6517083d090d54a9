import type { Account } from '../../domain/account.ts';
import { type Contact, normalizeEmail } from '../../domain/contact.ts';
import { DomainError } from '../../domain/errors.ts';
import type {
  AccountRepository,
  ContactRepository,
  PartnerFamily,
  WebhookConfigRepository,
} from '../../domain/ports.ts';
import type { Scope, WebhookConfig } from '../../domain/webhook-config.ts';
import { Table } from './table.ts';

export class InMemoryAccountRepository implements AccountRepository {
  readonly table = new Table<Account>();
  constructor(private readonly configs: InMemoryWebhookConfigRepository) {}
  async get(id: string) {
    return this.table.get(id);
  }
  async partnerFamily(accountId: string): Promise<PartnerFamily | null> {
    const account = await this.get(accountId);
    if (!account) return null;
    return {
      account,
      ownConfig: await this.configs.find(account.id, 'partner'),
      masterConfig: account.parentId ? await this.configs.find(account.parentId, 'partner') : null,
      childIds: this.childIds(account.id),
      siblingIds: account.parentId ? this.childIds(account.parentId) : [],
    };
  }
  private childIds(parentId: string) {
    return [...this.table.rows.values()].filter((a) => a.parentId === parentId).map((a) => a.id);
  }
  async save(account: Account) {
    this.table.put(account.id, account);
  }
}

export class InMemoryContactRepository implements ContactRepository {
  readonly table = new Table<Contact>();
  async get(id: string) {
    return this.table.get(id);
  }
  async findByEmail(email: string) {
    return this.table.find((c) => normalizeEmail(c.email) === normalizeEmail(email));
  }
  async accessOf(contactId: string) {
    const contact = this.table.get(contactId);
    return contact && { accountId: contact.accountId, apiAccess: contact.apiAccess };
  }
  async emailsWithApiAccess(accountId: string) {
    return [...this.table.rows.values()]
      .filter((c) => c.accountId === accountId && c.apiAccess)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1))
      .map((c) => c.email);
  }
  async save(contact: Contact) {
    const other = this.table.find(
      (c) => c.id !== contact.id && normalizeEmail(c.email) === normalizeEmail(contact.email),
    );
    if (other) throw new DomainError('CONFLICT', 'The change conflicts with existing data.');
    this.table.put(contact.id, contact);
  }
}

export class InMemoryWebhookConfigRepository implements WebhookConfigRepository {
  readonly table = new Table<WebhookConfig>();
  byId(id: string) {
    return this.table.find((c) => c.id === id);
  }
  /** What the record of attempts does to an endpoint's health (the SQL writes these columns alone). */
  setHealth(
    id: string,
    health: Pick<WebhookConfig, 'failingSince' | 'enabled' | 'disabledReason' | 'failureMailedAt'>,
  ) {
    const config = this.byId(id);
    if (config) this.table.put(`${config.accountId}/${config.scope}`, Object.assign(config, health));
  }
  async find(accountId: string, scope: Scope) {
    return this.table.get(`${accountId}/${scope}`);
  }
  /** One unit of work at a time here: nothing to lock. */
  async findForChange(accountId: string, scope: Scope) {
    return this.find(accountId, scope);
  }
  async save(config: WebhookConfig) {
    this.table.put(`${config.accountId}/${config.scope}`, config);
  }
  async saveKeys(config: WebhookConfig) {
    const stored = this.byId(config.id);
    if (!stored) return;
    const { signatureKey, previousKey, updatedAt, asymmetricSigning, signingPair, previousPair } = config;
    this.table.put(
      `${stored.accountId}/${stored.scope}`,
      Object.assign(stored, { signatureKey, previousKey, updatedAt, asymmetricSigning, signingPair, previousPair }),
    );
  }
  async dropExpiredKeys(now: Date) {
    const expired = [...this.table.rows.values()].filter(
      (c) => (c.previousKey && c.previousKey.expiresAt <= now) || (c.previousPair && c.previousPair.expiresAt <= now),
    );
    for (const config of expired) config.dropExpiredKey(now);
    return expired.length;
  }
}
