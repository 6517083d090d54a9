import type { Account } from '../account.ts';
import type { CancellationReason } from '../cancellation.ts';
import type { JobIdentifier } from '../command.ts';
import type { Contact } from '../contact.ts';
import type { Invoice } from '../invoice.ts';
import type { Job } from '../job.ts';
import type { OrderMapping } from '../order-mapping.ts';
import type { OrderFilter } from '../orders.ts';
import type { Scope, WebhookConfig } from '../webhook-config.ts';
import type { CommandLog, CommandQueue } from './commands.ts';
import type { DeliveryLog, DeliveryQueue, EventFeed, EventOutbox } from './events.ts';
import type { OperatorSearch } from './operators.ts';

// The repositories of a unit of work, one per aggregate or read side, and the set a unit hands its work.
// `get`/`find` answer null when absent; `save` inserts or updates the whole aggregate. Writes become visible to other
// callers only when the surrounding unit of work commits.

/** What decides a partner's polling scope, read in one go (the listings are hot paths). */
export interface PartnerFamily {
  account: Account;
  /** The account's own partner-scoped configuration, and its master's. */
  ownConfig: WebhookConfig | null;
  masterConfig: WebhookConfig | null;
  /** Direct children of the account, and of its master (the account among them). */
  childIds: string[];
  siblingIds: string[];
}

export interface AccountRepository {
  get(id: string): Promise<Account | null>;
  /** The account with the configurations and relatives that decide its polling scope; null when absent. */
  partnerFamily(accountId: string): Promise<PartnerFamily | null>;
  save(account: Account): Promise<void>;
}

export interface ContactRepository {
  get(id: string): Promise<Contact | null>;
  /** Case-insensitive: e-mail addresses are unique across all accounts regardless of case. */
  findByEmail(email: string): Promise<Contact | null>;
  /**
   * Just what every authenticated call checks (a hot path): the contact's account and API access; null when absent.
   * An adapter may read the partner family of that account with it, for `AccountRepository.partnerFamily` in the same
   * unit: the caller's keys and scope as they stood when its request arrived.
   */
  accessOf(contactId: string): Promise<{ accountId: string; apiAccess: boolean } | null>;
  /** The e-mail addresses of the account's contacts with API access. */
  emailsWithApiAccess(accountId: string): Promise<string[]>;
  save(contact: Contact): Promise<void>;
}

export interface WebhookConfigRepository {
  find(accountId: string, scope: Scope): Promise<WebhookConfig | null>;
  /**
   * As `find`, the row locked until the unit of work ends: a change made from what it read (a rotation, a PUT) runs
   * after any other that committed first, so neither loses what the other wrote.
   */
  findForChange(accountId: string, scope: Scope): Promise<WebhookConfig | null>;
  save(config: WebhookConfig): Promise<void>;
  /**
   * Writes the configuration's keys (current, previous and its end) and updatedAt alone: whatever the record of
   * attempts wrote meanwhile (failing, disabled) stays as it is. The configuration must exist.
   */
  saveKeys(config: WebhookConfig): Promise<void>;
  /** Clears every rotated-out key whose window ended at or before `now`; answers how many. */
  dropExpiredKeys(now: Date): Promise<number>;
}

export interface JobRepository {
  get(apiId: string): Promise<Job | null>;
  /**
   * The job, locked for change until the unit of work ends: changes to one job run one at a time, so that each
   * reads the state the previous one committed and their events are stored in the order the changes commit.
   */
  getForChange(apiId: string): Promise<Job | null>;
  /**
   * Locks the jobs of these ids that exist, as `getForChange` would, taking their rows in apiId order: a unit of work
   * that changes several jobs takes them all first, so that two such units never wait for each other in a circle.
   */
  lockForChange(apiIds: readonly string[]): Promise<void>;
  /**
   * Jobs the identifier names (an order number or external id may name several) among those assigned to one of
   * `partnerIds`, at most `limit`, in apiId order, locked for change as by `getForChange`. Filtering first means no
   * other tenant's jobs can crowd them out.
   */
  findByIdentifier(identifier: JobIdentifier, partnerIds: readonly string[], limit: number): Promise<Job[]>;
  /** Whether the identifier names any job at all, whoever it belongs to. */
  identifies(identifier: JobIdentifier): Promise<boolean>;
  save(job: Job): Promise<void>;
  /** A fresh order number, `O-` and 10 digits, never handed out twice. */
  nextOrderNumber(): Promise<string>;
}

/**
 * The partner listings' read side. Every method takes the partner ids of a resolved scope and returns jobs
 * assigned to one of them, ordered by `updatedAt` descending, then `apiId` ascending.
 */
export interface PartnerOrderQueries {
  page(partnerIds: readonly string[], filter: OrderFilter, offset: number, limit: number): Promise<Job[]>;
  count(partnerIds: readonly string[], filter: OrderFilter): Promise<number>;
  /** The same rows, read in batches as the consumer takes them; `limit` null reads to the end. */
  stream(
    partnerIds: readonly string[],
    filter: OrderFilter,
    offset: number,
    limit: number | null,
  ): AsyncIterable<Job[]>;
}

export interface InvoiceRepository {
  get(id: string): Promise<Invoice | null>;
  save(invoice: Invoice): Promise<void>;
}

export interface CancellationReasonRepository {
  get(name: string): Promise<CancellationReason | null>;
  /** Inserts or replaces the reason of that name. */
  save(reason: CancellationReason): Promise<void>;
}

export interface OrderMappingRepository {
  get(brandAccountId: string): Promise<OrderMapping | null>;
  /** Inserts or replaces the brand's mapping. */
  save(mapping: OrderMapping): Promise<void>;
}

export interface Repositories {
  accounts: AccountRepository;
  contacts: ContactRepository;
  webhookConfigs: WebhookConfigRepository;
  jobs: JobRepository;
  partnerOrders: PartnerOrderQueries;
  invoices: InvoiceRepository;
  cancellationReasons: CancellationReasonRepository;
  orderMappings: OrderMappingRepository;
  events: EventOutbox;
  eventFeed: EventFeed;
  commands: CommandLog;
  commandQueue: CommandQueue;
  deliveryQueue: DeliveryQueue;
  deliveryLog: DeliveryLog;
  operatorSearch: OperatorSearch;
}
