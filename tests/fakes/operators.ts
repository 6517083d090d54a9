import type { Account } from '../../domain/account.ts';
import type { Contact } from '../../domain/contact.ts';
import type { CommandEntry, EndpointHealthFilter, OperatorSearch } from '../../domain/ports.ts';
import type {
  InMemoryAccountRepository,
  InMemoryContactRepository,
  InMemoryWebhookConfigRepository,
} from './accounts.ts';
import type { InMemoryCommandLog } from './commands.ts';
import type { InMemoryDeliveryStore } from './deliveries.ts';
import { copy } from './table.ts';

const byName = (a: Account, b: Account) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1);
const newestFirst = <T extends { createdAt: Date; seq: number }>(a: T, b: T) =>
  b.createdAt.getTime() - a.createdAt.getTime() || b.seq - a.seq;

/** The operator console's reads over the other fakes' rows, ordered as the SQL orders them. */
export class InMemoryOperatorSearch implements OperatorSearch {
  constructor(
    private readonly stores: {
      accounts: InMemoryAccountRepository;
      contacts: InMemoryContactRepository;
      configs: InMemoryWebhookConfigRepository;
      commands: InMemoryCommandLog;
      deliveries: InMemoryDeliveryStore;
    },
  ) {}
  private get allAccounts() {
    return [...this.stores.accounts.table.rows.values()].map(copy);
  }
  private get allContacts() {
    return [...this.stores.contacts.table.rows.values()].map(copy);
  }

  async accounts(text: string, limit: number) {
    const needle = text.toLowerCase();
    return this.allAccounts
      .map((account) => ({
        account,
        named: account.name.toLowerCase().includes(needle),
        emails: this.allContacts
          .filter((c) => c.accountId === account.id && c.email.toLowerCase().includes(needle))
          .map((c) => c.email)
          .sort(),
      }))
      .filter((m) => m.named || m.emails.length > 0)
      .sort((a, b) => byName(a.account, b.account))
      .slice(0, limit)
      .map((m) => ({ account: m.account, matchedEmails: m.named ? [] : m.emails }));
  }

  async childrenOf(accountId: string) {
    return this.allAccounts.filter((a) => a.parentId === accountId).sort(byName);
  }

  async contactsOf(accountId: string): Promise<Contact[]> {
    return this.allContacts
      .filter((c) => c.accountId === accountId)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
  }

  async endpoints(health: EndpointHealthFilter, limit: number) {
    const names = new Map(this.allAccounts.map((a) => [a.id, a.name]));
    const rank = (failingSince: Date | null) => (failingSince ? failingSince.getTime() : Number.POSITIVE_INFINITY);
    return [...this.stores.configs.table.rows.values()]
      .map(copy)
      .filter((c) =>
        health === 'failing' ? c.enabled && c.failingSince !== null : health === 'disabled' ? !c.enabled : true,
      )
      .map((config) => ({ config, accountName: names.get(config.accountId) ?? '' }))
      .sort(
        (a, b) =>
          rank(a.config.failingSince) - rank(b.config.failingSince) ||
          Number(a.config.enabled) - Number(b.config.enabled) ||
          (a.accountName < b.accountName ? -1 : a.accountName > b.accountName ? 1 : 0) ||
          (a.config.scope < b.config.scope ? -1 : 1),
      )
      .slice(0, limit);
  }

  async deliveryIds(of: { eventId: string } | { cid: string }, limit: number) {
    const eventIds = new Set(
      'eventId' in of
        ? [of.eventId]
        : [...this.stores.commands.table.rows.values()]
            .filter((c) => c.cid === of.cid && c.result)
            .map((c) => String(c.result?._eid)),
    );
    return this.stores.deliveries.rows
      .filter((d) => eventIds.has(d.event.id))
      .sort(newestFirst)
      .slice(0, limit)
      .map((d) => d.id);
  }

  async commandsByCid(cid: string, limit: number): Promise<CommandEntry[]> {
    return [...this.stores.commands.table.rows.values()]
      .filter((c) => c.cid === cid)
      .sort(newestFirst)
      .slice(0, limit)
      .map((c) => ({
        accountId: c.accountId,
        cid: c.cid,
        type: c.type,
        status: c.status,
        result: c.result && copy(c.result),
        createdAt: c.createdAt,
        finishedAt: c.finishedAt,
      }));
  }
}
