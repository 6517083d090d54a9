import type { Account } from './account.ts';
import type { MailMessage, TokenClaims, TokenKind } from './auth.ts';
import type { CancellationReason } from './cancellation.ts';
import type { ClaimedCommand, JobIdentifier, StoredCommand } from './command.ts';
import type { Contact } from './contact.ts';
import type { ClaimedDelivery, DeliveryAttempt, DeliveryFilter, DeliveryResult, DeliveryView } from './delivery.ts';
import type { OutboxEvent } from './event.ts';
import type { Invoice } from './invoice.ts';
import type { Job } from './job.ts';
import type { OrderMapping } from './order-mapping.ts';
import type { OrderFilter } from './orders.ts';
import type { Scope, WebhookConfig } from './webhook-config.ts';

// Repositories: `get`/`find` answer null when absent; `save` inserts or updates the whole aggregate.
// Writes become visible to other callers only when the surrounding unit of work commits.

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
  /** Just what every authenticated call checks (a hot path): the contact's account and API access; null when absent. */
  accessOf(contactId: string): Promise<{ accountId: string; apiAccess: boolean } | null>;
  save(contact: Contact): Promise<void>;
}

export interface WebhookConfigRepository {
  find(accountId: string, scope: Scope): Promise<WebhookConfig | null>;
  save(config: WebhookConfig): Promise<void>;
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
  stream(partnerIds: readonly string[], filter: OrderFilter, offset: number, limit: number | null): AsyncIterable<Job[]>;
}

export interface CommandLog {
  /**
   * Takes the account's `_cid` for this command in the current unit of work, or answers the command that holds
   * it. A concurrent claim of the same `_cid` waits for the first one's unit of work: if that commits, it gets
   * the stored command; if that rolls back, it takes the `_cid` itself.
   */
  claim(command: Omit<StoredCommand, 'status' | 'answer'>, at: Date): Promise<StoredCommand | null>;
  /** As `claim`, for a command that runs later: it is stored `accepted` with its answer, and the executor is woken. */
  accept(command: Omit<StoredCommand, 'status'>, at: Date): Promise<StoredCommand | null>;
  /** Records how a command held in the current unit of work ended: its status, and the event that tells it. */
  finish(accountId: string, cid: string, outcome: FinishedCommand, at: Date): Promise<void>;
  /** The command's state as its sender may poll it; null when there is none. */
  result(accountId: string, cid: string): Promise<CommandState | null>;
}

export interface FinishedCommand {
  status: 'succeeded' | 'failed';
  /** The CommandResultEvent or CommandErrorEvent payload, as it was stored in the outbox. */
  result: Record<string, unknown>;
  /** The answer a replay gets (partner commands, which answer when they run); absent keeps the stored one. */
  answer?: unknown;
}

export type CommandState =
  | { status: 'accepted' }
  | { status: 'succeeded' | 'failed'; result: Record<string, unknown>; finishedAt: Date };

/** The executor's side of the command log: accepted commands, claimed under a lease so that each runs once. */
export interface CommandQueue {
  /**
   * Claims up to `limit` accepted commands that nobody holds (never claimed, or whose lease ran out before `now`),
   * oldest first, each until `leaseUntil`. Claims by concurrent executors never overlap.
   */
  claimDue(limit: number, now: Date, leaseUntil: Date): Promise<ClaimedCommand[]>;
  /**
   * Records how a claimed command ended (as `CommandLog.finish`), when the claim is still this one's; false, with
   * nothing changed, when the claim is lost (its lease ran out and another executor took the command over, or
   * finished it). The row stays locked until the unit of work ends.
   */
  finishClaimed(command: ClaimedCommand, outcome: FinishedCommand, at: Date): Promise<boolean>;
  /**
   * Gives a claimed command back after an unexpected failure, to be claimed again no earlier than `notBefore`. With
   * `attemptUsed` false the claim gives its attempt back too (the failure was the moment's, not the command's).
   */
  release(command: ClaimedCommand, notBefore: Date, attemptUsed: boolean): Promise<void>;
  /** Deletes up to `limit` commands that finished at or before `before`; answers how many. */
  purgeFinished(before: Date, limit: number): Promise<number>;
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

export interface EventOutbox {
  /**
   * Stores the events in the current unit of work, with a pending delivery for each that is to be delivered: they
   * commit, or vanish, with the change that caused them.
   */
  add(events: readonly OutboxEvent[]): Promise<void>;
  /** The newest events addressed to an account, newest first (operators and tests). */
  recentFor(accountId: string, limit: number): Promise<OutboxEvent[]>;
}

/** Deliveries of events to endpoints, claimed under a lease so that concurrent senders never send one twice. */
export interface DeliveryQueue {
  /**
   * Claims up to `limit` pending deliveries that are due at `now` and nobody holds, each until `leaseUntil`, oldest
   * first. For one endpoint and one order, a delivery is not due while an earlier one is still pending (being sent,
   * or waiting for its retry): deliveries of one order go out in order, other orders are not held up.
   */
  claimDue(limit: number, now: Date, leaseUntil: Date, claimToken: string): Promise<ClaimedDelivery[]>;
  /** Gives claims back unsent (a sender stopping), so that they are due at once instead of after their lease. */
  release(claims: readonly Pick<ClaimedDelivery, 'id' | 'claimToken'>[]): Promise<void>;
  /**
   * Logs the attempts, and gives each delivery the state its attempt leaves, unless its claim is no longer the current
   * one (its lease ran out and another sender claimed it): then only the attempt is logged.
   */
  record(results: readonly DeliveryResult[], at: Date): Promise<void>;
  /**
   * Makes a delivery pending and due at `now` again, its attempts continuing, unless it is being sent right now (then
   * it is left to its sender). False when there is no such delivery.
   */
  redeliver(deliveryId: string, now: Date, endpointId?: string): Promise<boolean>;
  /**
   * Makes every failed delivery of the endpoint (or of the account, every endpoint) created at or after `since` pending
   * and due at `now` again; answers how many. Deliveries of one order still go out in their order (see `claimDue`).
   */
  redeliverFailed(of: { endpointId: string } | { accountId: string }, since: Date, now: Date): Promise<number>;
  /** Deliveries newest first, with their attempts; `before` continues after a delivery of an earlier page. */
  list(filter: DeliveryFilter): Promise<DeliveryView[]>;
  /**
   * Deletes up to `limit` finished deliveries of events older than `before`, and up to `limit` such events left without
   * any delivery; answers the larger count (a full batch means more may be waiting). Pending deliveries are kept.
   */
  purgeBefore(before: Date, limit: number): Promise<number>;
}

/** The event feed (CONTRACT §10): every event of an endpoint, in the order the events became visible. */
export interface EventFeed {
  /**
   * Gives up to `limit` committed events without a position their positions, in one round, unless another round is
   * under way (then nothing, 0): positions grow in the order events commit, and every round commits its positions at
   * once, so that a reader never passes a position that is filled in later. Outside a transaction the round is one of
   * its own, committed when it answers; inside the unit's transaction it commits with it. Answers how many got one.
   */
  sequence(limit: number): Promise<number>;
  /** The highest position of the endpoint's events that the retention purge has deleted (0: none). */
  purgedThrough(endpointId: string): Promise<number>;
  /** The endpoint's positioned events after `afterPosition` (0: from the oldest), oldest first. */
  page(endpointId: string, afterPosition: number, limit: number): Promise<FeedEntry[]>;
}

export interface FeedEntry {
  position: number;
  createdAt: Date;
  /** The payload exactly as delivered. */
  payload: Record<string, unknown>;
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
  deliveries: DeliveryQueue;
}

/** Work that a unit of work leaves for the background worker: commands to execute, deliveries to send. */
export type BackgroundWork = 'commands' | 'deliveries';

export interface Clock {
  now(): Date;
}

export interface IdGenerator {
  /** A new random UUID. */
  newId(): string;
}

export interface WebhookTargetPolicy {
  /** Why the URL may not receive webhooks (scheme, or an address that is not public), or null when it may. */
  refusalReason(url: string): Promise<string | null>;
}

export interface TokenService {
  /** A signed token of this kind for the claims, issued at `issuedAt`, valid for `lifetimeSeconds`. */
  issue(kind: TokenKind, claims: TokenClaims, issuedAt: Date, lifetimeSeconds: number): Promise<string>;
  /** The claims of a valid token of exactly this kind at `now`; null for anything else, whatever the reason. */
  verify(kind: TokenKind, token: string, now: Date): Promise<TokenClaims | null>;
}

export interface WebhookRequest {
  url: string;
  /** `_eid`: the `webhook-id` header. */
  eventId: string;
  /** The exact bytes to send and sign. */
  body: string;
  signatureKey: string | null;
}

export interface WebhookSender {
  /**
   * Sends the event once (one durable attempt, whatever the answer: the next waits for the schedule); the target is
   * checked at connection time. Only a request that a reused keep-alive connection dropped before any answer is sent
   * again at once on a new connection, within the attempt. Answers the attempt's outcome; never throws for the
   * receiver's faults.
   */
  send(request: WebhookRequest): Promise<DeliveryAttempt>;
}

export interface Mailer {
  /** Resolves once the message is handed over; rejects when it could not be. */
  send(message: MailMessage): Promise<void>;
}

/** A count of requests per key within a window, shared by every process where the database is a server. */
export interface RateLimiter {
  /** Counts one request; answers the seconds to wait when the limit is exceeded, else null. */
  consume(key: string): Promise<number | null>;
  /**
   * Without counting: the seconds to wait when the key is already known to be refused for the rest of its window
   * (remembered in this process), else null. Cheap enough to ask before any lookup.
   */
  peek(key: string): number | null;
}

/** A stream of one account under way; released when it ends, whichever way. */
export interface StreamSlot {
  release(): Promise<void>;
}

/** Streams at once per account (CONTRACT §1: at most 2 legacy listings). */
export interface StreamSlots {
  /** A slot for one more stream of the account, or null when all are taken. */
  take(accountId: string): Promise<StreamSlot | null>;
}

export interface LoginRateLimiter {
  /** Counts one login attempt; answers the seconds to wait when a limit is exceeded, else null. */
  consume(email: string, clientAddress: string): Promise<number | null>;
}

export interface RequestSignatures {
  /** Whether `signature` is the hex HMAC-SHA256 of `body` under `key` (hex in either case), compared in constant time. */
  matches(key: string, body: Uint8Array, signature: string): boolean;
}

export interface Deferrer {
  /**
   * Runs work after the current request has been answered, in a unit of work of its own. Failures are
   * logged, never shown to the caller; shutdown waits for work under way.
   */
  defer(name: string, work: (deps: Deps) => Promise<void>): void;
}

/** What lives as long as the process, shared by every unit of work: time, ids, tokens, limits, mail, the sender. */
export interface ProcessServices {
  clock: Clock;
  ids: IdGenerator;
  webhookTargets: WebhookTargetPolicy;
  tokens: TokenService;
  mailer: Mailer;
  loginLimiter: LoginRateLimiter;
  /** Endpoint tests per account (CONTRACT §10: 10 a minute). */
  endpointTestLimiter: RateLimiter;
  /** Authenticated requests per account and second (CONTRACT §1, `API_RATE_LIMIT_PER_ACCOUNT`). */
  requestLimiter: RateLimiter;
  streamSlots: StreamSlots;
  deferrer: Deferrer;
  signatures: RequestSignatures;
  webhookSender: WebhookSender;
}

/**
 * The collaborators a use case may be handed, by name (`Pick<Deps, 'jobs' | 'clock'>`): the repositories of the unit
 * of work it runs in, and the process's services.
 */
export type Deps = Repositories & ProcessServices;
