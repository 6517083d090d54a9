import { InMemoryStreamSlots } from '../adapters/stream-slots.ts';
import { DomainError } from '../domain/errors.ts';
import type { Account } from '../domain/account.ts';
import { SEEDED_CANCELLATION_REASONS, type CancellationReason } from '../domain/cancellation.ts';
import { normalizeEmail, type Contact } from '../domain/contact.ts';
import type { OutboxEvent } from '../domain/event.ts';
import type { Invoice } from '../domain/invoice.ts';
import { INACTIVE_STATUSES, type Job } from '../domain/job.ts';
import type { OrderFilter } from '../domain/orders.ts';
import type { OrderMapping } from '../domain/order-mapping.ts';
import type {
  AccountRepository, CancellationReasonRepository, Clock, CommandLog, CommandQueue, CommandState, ContactRepository, DeliveryQueue, FinishedCommand, WebhookRequest, WebhookSender, Deferrer, Deps, EventFeed, EventOutbox, FeedEntry, IdGenerator,
  InvoiceRepository, JobRepository, LoginRateLimiter, RateLimiter, Mailer, OrderMappingRepository, PartnerFamily, PartnerOrderQueries, Repositories, TokenService,
  WebhookConfigRepository, WebhookTargetPolicy,
} from '../domain/ports.ts';
import type { MailMessage, TokenClaims, TokenKind } from '../domain/auth.ts';
import type { ClaimedCommand, JobIdentifier, StoredCommand } from '../domain/command.ts';
import {
  isSuccess, type AttemptExchange, type ClaimedDelivery, type DeliveryAttempt, type DeliveryDetail, type DeliveryFilter, type DeliveryResult, type DeliveryStatus,
  type DeliveryView, type SentAttempt,
} from '../domain/delivery.ts';
import { judgeEndpoint, type EndpointNotice } from '../domain/endpoint-health.ts';
import type { Scope, WebhookConfig } from '../domain/webhook-config.ts';

// In-memory ports with the adapters' semantics: stored values are copies, so changing an object
// without saving it changes nothing, exactly as with the database.
const copy = <T extends object>(value: T): T =>
  Object.assign(Object.create(Object.getPrototypeOf(value)), structuredClone({ ...value }));

class Table<T extends object> {
  readonly rows = new Map<string, T>();
  get(key: string): T | null {
    const row = this.rows.get(key);
    return row ? copy(row) : null;
  }
  put(key: string, row: T) {
    this.rows.set(key, copy(row));
  }
  find(match: (row: T) => boolean): T | null {
    for (const row of this.rows.values()) if (match(row)) return copy(row);
    return null;
  }
}

export class InMemoryAccountRepository implements AccountRepository {
  private readonly table = new Table<Account>();
  constructor(private readonly configs: InMemoryWebhookConfigRepository) {}
  async get(id: string) { return this.table.get(id); }
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
  private childIds(parentId: string) { return [...this.table.rows.values()].filter((a) => a.parentId === parentId).map((a) => a.id); }
  async save(account: Account) { this.table.put(account.id, account); }
}

export class InMemoryContactRepository implements ContactRepository {
  private readonly table = new Table<Contact>();
  async get(id: string) { return this.table.get(id); }
  async findByEmail(email: string) { return this.table.find((c) => normalizeEmail(c.email) === normalizeEmail(email)); }
  async accessOf(contactId: string) {
    const contact = this.table.get(contactId);
    return contact && { accountId: contact.accountId, apiAccess: contact.apiAccess };
  }
  async emailsWithApiAccess(accountId: string) {
    return [...this.table.rows.values()].filter((c) => c.accountId === accountId && c.apiAccess)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1)).map((c) => c.email);
  }
  async save(contact: Contact) {
    const other = this.table.find((c) => c.id !== contact.id && normalizeEmail(c.email) === normalizeEmail(contact.email));
    if (other) throw new DomainError('CONFLICT', 'The change conflicts with existing data.');
    this.table.put(contact.id, contact);
  }
}

export class InMemoryWebhookConfigRepository implements WebhookConfigRepository {
  private readonly table = new Table<WebhookConfig>();
  byId(id: string) { return this.table.find((c) => c.id === id); }
  /** What the record of attempts does to an endpoint's health (the SQL writes these columns alone). */
  setHealth(id: string, health: Pick<WebhookConfig, 'failingSince' | 'enabled' | 'disabledReason' | 'failureMailedAt'>) {
    const config = this.byId(id);
    if (config) this.table.put(`${config.accountId}/${config.scope}`, Object.assign(config, health));
  }
  async find(accountId: string, scope: Scope) { return this.table.get(`${accountId}/${scope}`); }
  async save(config: WebhookConfig) { this.table.put(`${config.accountId}/${config.scope}`, config); }
  async dropExpiredKeys(now: Date) {
    const expired = [...this.table.rows.values()].filter((c) => c.previousKey && c.previousKey.expiresAt <= now);
    for (const config of expired) config.previousKey = null;
    return expired.length;
  }
}

export class InMemoryJobRepository implements JobRepository {
  private readonly table = new Table<Job>();
  private lastOrderNumber = 1_000_000_000;
  async get(apiId: string) { return this.table.get(apiId); }
  /** One unit of work at a time here: nothing to lock. */
  async getForChange(apiId: string) { return this.table.get(apiId); }
  async lockForChange(_apiIds: readonly string[]) {}
  private named(identifier: JobIdentifier) {
    const field = ({ jobApiId: 'apiId', invoicingEid: 'invoicingEid', gidOrderNumber: 'name', yourOrderID: 'extPartnerId' } as const)[identifier.kind];
    return this.all().filter((j) => j[field] === identifier.value).sort((a, b) => (a.apiId < b.apiId ? -1 : 1));
  }
  async findByIdentifier(identifier: JobIdentifier, partnerIds: readonly string[], limit: number) {
    return this.named(identifier).filter((j) => j.partnerId !== null && partnerIds.includes(j.partnerId)).slice(0, limit);
  }
  async identifies(identifier: JobIdentifier) { return this.named(identifier).length > 0; }
  async save(job: Job) { this.table.put(job.apiId, job); }
  async nextOrderNumber() { return `O-${String(++this.lastOrderNumber).padStart(10, '0')}`; }
  all(): Job[] { return [...this.table.rows.values()].map(copy); }
}

/** The listings' semantics in plain JavaScript: the reference the SQL is held to. */
export class InMemoryPartnerOrderQueries implements PartnerOrderQueries {
  constructor(private readonly jobs: InMemoryJobRepository) {}
  private select(partnerIds: readonly string[], filter: OrderFilter) {
    return this.jobs.all()
      .filter((j) => j.partnerId !== null && partnerIds.includes(j.partnerId))
      .filter((j) => !filter.updatedSince || j.updatedAt.getTime() >= filter.updatedSince.getTime())
      .filter((j) => !filter.active || !INACTIVE_STATUSES.includes(j.status))
      .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || (a.apiId < b.apiId ? -1 : a.apiId > b.apiId ? 1 : 0));
  }
  async page(partnerIds: readonly string[], filter: OrderFilter, offset: number, limit: number) {
    return this.select(partnerIds, filter).slice(offset, offset + limit);
  }
  async count(partnerIds: readonly string[], filter: OrderFilter) { return this.select(partnerIds, filter).length; }
  async *stream(partnerIds: readonly string[], filter: OrderFilter, offset: number, limit: number | null) {
    const rows = this.select(partnerIds, filter).slice(offset, limit === null ? undefined : offset + limit);
    for (let i = 0; i < rows.length; i += 2) yield rows.slice(i, i + 2);
  }
}

export class InMemoryInvoiceRepository implements InvoiceRepository {
  private readonly table = new Table<Invoice>();
  async get(id: string) { return this.table.get(id); }
  async save(invoice: Invoice) { this.table.put(invoice.id, invoice); }
}

export class InMemoryCancellationReasonRepository implements CancellationReasonRepository {
  private readonly table = new Table<CancellationReason>();
  constructor() {
    for (const reason of SEEDED_CANCELLATION_REASONS) this.table.put(reason.name, reason);
  }
  async get(name: string) { return this.table.get(name); }
  async save(reason: CancellationReason) { this.table.put(reason.name, reason); }
}

export class InMemoryOrderMappingRepository implements OrderMappingRepository {
  private readonly table = new Table<OrderMapping>();
  async get(brandAccountId: string) { return this.table.get(brandAccountId); }
  async save(mapping: OrderMapping) { this.table.put(mapping.brandAccountId, mapping); }
}

interface CommandRow extends StoredCommand {
  result: Record<string, unknown> | null;
  finishedAt: Date | null;
  seq: number;
  attempts: number;
  leaseUntil: Date | null;
  claimToken: string | null;
  queued: boolean;
}

/** No concurrency here: a claim of a held `_cid` answers the holder at once. */
export class InMemoryCommandLog implements CommandLog {
  readonly table = new Table<CommandRow>();
  private seq = 0;
  private take(command: Omit<StoredCommand, 'status'>, queued: boolean) {
    const held = this.table.get(`${command.accountId}/${command.cid}`);
    if (held) return { accountId: held.accountId, cid: held.cid, type: held.type, body: held.body, status: held.status, answer: held.answer };
    this.table.put(`${command.accountId}/${command.cid}`, {
      ...command, status: 'accepted', result: null, finishedAt: null, seq: ++this.seq, attempts: 0, leaseUntil: null, claimToken: null, queued,
    });
    return null;
  }
  async claim(command: Omit<StoredCommand, 'status' | 'answer'>) { return this.take({ ...command, answer: null }, false); }
  async accept(command: Omit<StoredCommand, 'status'>) { return this.take(command, true); }
  async finish(accountId: string, cid: string, outcome: FinishedCommand, at: Date) {
    const held = this.table.get(`${accountId}/${cid}`)!;
    this.table.put(`${accountId}/${cid}`, {
      ...held, status: outcome.status, result: outcome.result, answer: outcome.answer === undefined ? held.answer : outcome.answer,
      finishedAt: at, leaseUntil: null, claimToken: null,
    });
  }
  async result(accountId: string, cid: string): Promise<CommandState | null> {
    const held = this.table.get(`${accountId}/${cid}`);
    if (!held) return null;
    return held.status === 'accepted' ? { status: 'accepted' } : { status: held.status, result: held.result!, finishedAt: held.finishedAt! };
  }
}

export class InMemoryCommandQueue implements CommandQueue {
  private tokens = 0;
  constructor(private readonly log: InMemoryCommandLog) {}
  private rows() { return [...this.log.table.rows.values()].map(copy); }
  async claimDue(limit: number, now: Date, leaseUntil: Date): Promise<ClaimedCommand[]> {
    const due = this.rows()
      .filter((c) => c.queued && c.status === 'accepted' && (!c.leaseUntil || c.leaseUntil.getTime() <= now.getTime()))
      .sort((a, b) => a.seq - b.seq).slice(0, limit);
    return due.map((c) => {
      const claimed = { ...c, attempts: c.attempts + 1, leaseUntil, claimToken: `claim-${++this.tokens}` };
      this.log.table.put(`${c.accountId}/${c.cid}`, claimed);
      return { accountId: c.accountId, cid: c.cid, body: c.body, attempts: claimed.attempts, claimToken: claimed.claimToken };
    });
  }
  async finishClaimed(command: ClaimedCommand, outcome: FinishedCommand, at: Date) {
    const held = this.log.table.get(`${command.accountId}/${command.cid}`);
    if (held?.status !== 'accepted' || held.claimToken !== command.claimToken) return false;
    await this.log.finish(command.accountId, command.cid, outcome, at);
    return true;
  }
  async release(command: ClaimedCommand, notBefore: Date, attemptUsed: boolean) {
    const held = this.log.table.get(`${command.accountId}/${command.cid}`)!;
    if (held.claimToken === command.claimToken) this.log.table.put(`${command.accountId}/${command.cid}`, { ...held, leaseUntil: notBefore, claimToken: null, attempts: held.attempts - (attemptUsed ? 0 : 1) });
  }
  async purgeFinished(before: Date, limit: number) {
    const old = this.rows().filter((c) => c.finishedAt && c.finishedAt.getTime() <= before.getTime()).slice(0, limit);
    for (const c of old) this.log.table.rows.delete(`${c.accountId}/${c.cid}`);
    return old.length;
  }
}

export class InMemoryEventOutbox implements EventOutbox {
  readonly stored: OutboxEvent[] = [];
  constructor(private readonly deliveries: InMemoryDeliveryQueue) {}
  async add(events: readonly OutboxEvent[]) {
    this.stored.push(...events.map(copy));
    for (const e of events) if (e.deliver) this.deliveries.create(e);
  }
  async recentFor(accountId: string, limit: number) {
    return this.stored.filter((e) => e.accountId === accountId).reverse().slice(0, limit).map(copy);
  }
}

interface DeliveryRow {
  id: string; seq: number; event: OutboxEvent; status: DeliveryStatus; attempts: number; nextAttemptAt: Date; leaseUntil: Date | null; claimToken: string | null;
  tries: (DeliveryAttempt & { exchange: AttemptExchange | null })[]; createdAt: Date;
}

/** The feed as the SQL one keeps it: positions given to stored events in the order they were stored. */
export class InMemoryEventFeed implements EventFeed {
  private readonly positions = new Map<string, number>();
  constructor(private readonly outbox: InMemoryEventOutbox) {}
  async sequence(limit: number) {
    const pending = this.outbox.stored.filter((e) => e.endpointId && !this.positions.has(e.id)).slice(0, limit);
    for (const e of pending) this.positions.set(e.id, this.positions.size + 1);
    return pending.length;
  }
  private readonly purged = new Map<string, number>();
  /** What the retention purge does to the feed: the endpoint's events through `position` are gone. */
  forget(endpointId: string, position: number) { this.purged.set(endpointId, Math.max(this.purged.get(endpointId) ?? 0, position)); }
  async purgedThrough(endpointId: string) { return this.purged.get(endpointId) ?? 0; }
  async page(endpointId: string, afterPosition: number, limit: number): Promise<FeedEntry[]> {
    return this.outbox.stored
      .filter((e) => e.endpointId === endpointId && (this.positions.get(e.id) ?? 0) > Math.max(afterPosition, this.purged.get(endpointId) ?? 0))
      .map((e) => ({ position: this.positions.get(e.id)!, createdAt: e.createdAt, payload: copy(e.payload) }))
      .sort((a, b) => a.position - b.position).slice(0, limit);
  }
}

/** Deliveries as the SQL queue keeps them: per-order order, leases, a log of tries. */
export class InMemoryDeliveryQueue implements DeliveryQueue {
  readonly rows: DeliveryRow[] = [];
  private seq = 0;
  constructor(private readonly configs: InMemoryWebhookConfigRepository) {}
  create(event: OutboxEvent) {
    this.rows.push({ id: `delivery-${++this.seq}`, seq: this.seq, event: copy(event), status: 'pending', attempts: 0, nextAttemptAt: event.createdAt, leaseUntil: null, claimToken: null, tries: [], createdAt: event.createdAt });
  }
  async claimDue(limit: number, now: Date, leaseUntil: Date, claimToken: string): Promise<ClaimedDelivery[]> {
    const held = (d: DeliveryRow) => this.rows.some((e) => e.status === 'pending' && e.seq < d.seq && e.event.endpointId === d.event.endpointId && d.event.orderId !== null && e.event.orderId === d.event.orderId);
    const due = this.rows
      .filter((d) => d.status === 'pending' && d.nextAttemptAt <= now && (!d.leaseUntil || d.leaseUntil <= now) && !held(d))
      .sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime() || a.seq - b.seq).slice(0, limit);
    return due.map((d) => {
      d.leaseUntil = leaseUntil;
      d.claimToken = claimToken;
      const config = this.configs.byId(d.event.endpointId!);
      return { id: d.id, eventId: d.event.id, attempts: d.attempts, body: JSON.stringify(d.event.payload), leaseUntil, claimToken, createdAt: d.createdAt,
        endpoint: config && { url: config.url, signatureKey: config.signatureKey, previousKey: config.previousKey, enabled: config.enabled } };
    });
  }
  async release(claims: readonly Pick<ClaimedDelivery, 'id' | 'claimToken'>[]) {
    for (const c of claims) {
      const d = this.rows.find((x) => x.id === c.id);
      if (d && d.claimToken === c.claimToken) Object.assign(d, { leaseUntil: null, claimToken: null });
    }
  }
  async record(results: readonly DeliveryResult[], at: Date, disableAfterMs: number): Promise<EndpointNotice[]> {
    const answered = new Map<string, { at: Date; ok: boolean }[]>();
    const endedFailed = new Map<string, number>();
    for (const r of results) {
      const d = this.rows.find((x) => x.id === r.deliveryId)!;
      const endpointId = d.event.endpointId!;
      d.tries.push({ ...r.attempt, exchange: r.exchange && structuredClone(r.exchange) });
      if (r.exchange) answered.set(endpointId, [...(answered.get(endpointId) ?? []), { at: r.attempt.at, ok: isSuccess(r.attempt.statusCode) }]);
      if (d.claimToken !== r.claimToken) continue;
      d.status = r.state.status;
      d.attempts += 1;
      d.leaseUntil = null;
      d.claimToken = null;
      if (r.state.status === 'pending') d.nextAttemptAt = r.state.nextAttemptAt;
      if (r.state.status === 'failed') endedFailed.set(endpointId, (endedFailed.get(endpointId) ?? 0) + 1);
    }
    const notices: EndpointNotice[] = [];
    for (const endpointId of new Set([...answered.keys(), ...endedFailed.keys()])) {
      const config = this.configs.byId(endpointId);
      if (!config) continue;
      const verdict = judgeEndpoint(config, answered.get(endpointId) ?? [], endedFailed.get(endpointId) ?? 0, at, disableAfterMs);
      this.configs.setHealth(endpointId, {
        failingSince: verdict.failingSince, enabled: config.enabled && !verdict.disable, disabledReason: verdict.disable ? 'failing' : config.disabledReason,
        failureMailedAt: verdict.disable || verdict.warn ? at : config.failureMailedAt,
      });
      if (verdict.disable || verdict.warn) {
        notices.push({
          kind: verdict.disable ? 'disabled' : 'failing', endpointId, accountId: config.accountId, url: config.url, failingSince: verdict.failingSince!,
          failedDeliveries: this.rows.filter((x) => x.event.endpointId === endpointId && x.status === 'failed').length,
        });
      }
    }
    return notices;
  }
  async get(deliveryId: string, endpointId?: string): Promise<DeliveryDetail | null> {
    const d = this.rows.find((x) => x.id === deliveryId && (!endpointId || x.event.endpointId === endpointId));
    if (!d) return null;
    return {
      ...this.view(d), endpointId: d.event.endpointId!, payload: JSON.stringify(d.event.payload),
      attempts: d.tries.map(({ exchange, ...t }) => ({ ...t, request: exchange ? structuredClone(exchange.request) : null, response: exchange?.response ? structuredClone(exchange.response) : null })),
    };
  }
  async redeliver(deliveryId: string, now: Date, endpointId?: string) {
    const d = this.rows.find((x) => x.id === deliveryId && (!endpointId || x.event.endpointId === endpointId));
    if (!d) return false;
    if (d.status === 'pending' && d.leaseUntil && d.leaseUntil > now) return true;
    Object.assign(d, { status: 'pending', nextAttemptAt: now, leaseUntil: null, claimToken: null });
    return true;
  }
  async redeliverFailed(of: { endpointId: string } | { accountId: string }, since: Date, now: Date) {
    const mine = (d: DeliveryRow) => ('endpointId' in of ? d.event.endpointId === of.endpointId : d.event.accountId === of.accountId);
    const failed = this.rows.filter((d) => mine(d) && d.status === 'failed' && d.createdAt >= since);
    for (const d of failed) Object.assign(d, { status: 'pending', nextAttemptAt: now, leaseUntil: null, claimToken: null });
    return failed.length;
  }
  async list(filter: DeliveryFilter): Promise<DeliveryView[]> {
    const { before } = filter;
    return this.rows
      .filter((d) => (!filter.accountId || d.event.accountId === filter.accountId) && (!filter.endpointId || d.event.endpointId === filter.endpointId) && (!filter.status || d.status === filter.status))
      .filter((d) => !before || d.createdAt < before.createdAt || (d.createdAt.getTime() === before.createdAt.getTime() && d.seq < before.seq))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.seq - a.seq).slice(0, filter.limit)
      .map((d) => this.view(d));
  }
  private view(d: DeliveryRow): DeliveryView {
    return {
      id: d.id, seq: d.seq, eventId: d.event.id, eventType: d.event.type, accountId: d.event.accountId, scope: d.event.scope,
      url: this.configs.byId(d.event.endpointId!)?.url ?? null, status: d.status, attempts: d.tries.map(({ exchange: _, ...t }) => ({ ...t })),
      createdAt: d.createdAt, nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt : null,
    };
  }
  async purgeBefore(before: Date, limit: number) {
    const old = this.rows.filter((d) => d.createdAt < before && d.status !== 'pending').slice(0, limit);
    for (const d of old) this.rows.splice(this.rows.indexOf(d), 1);
    return old.length;
  }
}

/** A receiver scripted by status codes (null: no answer), recording what was sent. */
export class ScriptedWebhookSender implements WebhookSender {
  readonly sent: WebhookRequest[] = [];
  constructor(private readonly clock: Clock, private readonly script: (request: WebhookRequest, n: number) => number | null = () => 200) {}
  async send(request: WebhookRequest): Promise<SentAttempt> {
    this.sent.push({ ...request });
    const statusCode = this.script(request, this.sent.length);
    const exchange = { request: { url: request.url, headers: { 'webhook-id': request.eventId } }, response: statusCode === null ? null : { headers: {}, body: '' } };
    return { at: this.clock.now(), statusCode, durationMs: 1, error: statusCode !== null && statusCode < 300 ? null : `HTTP ${statusCode}`, exchange };
  }
}

export const inMemoryRepositories = () => {
  const jobs = new InMemoryJobRepository();
  const webhookConfigs = new InMemoryWebhookConfigRepository();
  const commands = new InMemoryCommandLog();
  const deliveries = new InMemoryDeliveryQueue(webhookConfigs);
  const events = new InMemoryEventOutbox(deliveries);
  return {
  accounts: new InMemoryAccountRepository(webhookConfigs),
  contacts: new InMemoryContactRepository(),
  webhookConfigs,
  jobs,
  partnerOrders: new InMemoryPartnerOrderQueries(jobs),
  invoices: new InMemoryInvoiceRepository(),
  cancellationReasons: new InMemoryCancellationReasonRepository(),
  orderMappings: new InMemoryOrderMappingRepository(),
  events,
  eventFeed: new InMemoryEventFeed(events),
  commands,
  commandQueue: new InMemoryCommandQueue(commands),
  deliveries,
  } satisfies Repositories;
};

export class FixedClock implements Clock {
  constructor(private current = new Date('2026-11-22T12:00:00.000Z')) {}
  now() { return new Date(this.current); }
  advance(seconds: number) { this.current = new Date(this.current.getTime() + seconds * 1000); }
}

export class SequentialIds implements IdGenerator {
  private n = 0;
  newId() { return `00000000-0000-4000-8000-${String(++this.n).padStart(12, '0')}`; }
}

export const allowAllTargets: WebhookTargetPolicy = { refusalReason: async () => null };

/** Tokens as opaque strings remembered in memory, honouring kind and expiry like the real service. */
export class InMemoryTokenService implements TokenService {
  private readonly issued = new Map<string, { kind: TokenKind; claims: TokenClaims; expiresAt: number }>();
  private n = 0;
  async issue(kind: TokenKind, claims: TokenClaims, issuedAt: Date, lifetimeSeconds: number) {
    const token = `${kind}-token-${++this.n}`;
    this.issued.set(token, { kind, claims: { ...claims }, expiresAt: issuedAt.getTime() + lifetimeSeconds * 1000 });
    return token;
  }
  async verify(kind: TokenKind, token: string, now: Date) {
    const entry = this.issued.get(token);
    return entry && entry.kind === kind && now.getTime() < entry.expiresAt ? { ...entry.claims } : null;
  }
}

export class RecordingMailer implements Mailer {
  readonly sent: MailMessage[] = [];
  async send(message: MailMessage) { this.sent.push(message); }
}

export class CountingLoginLimiter implements LoginRateLimiter {
  private readonly counts = new Map<string, number>();
  constructor(private readonly perEmail = 5, private readonly perAddress = 30) {}
  async consume(email: string, clientAddress: string) {
    const e = (this.counts.get(`e:${email}`) ?? 0) + 1;
    const a = (this.counts.get(`a:${clientAddress}`) ?? 0) + 1;
    this.counts.set(`e:${email}`, e).set(`a:${clientAddress}`, a);
    return e > this.perEmail || a > this.perAddress ? 60 : null;
  }
}

export class CountingRateLimiter implements RateLimiter {
  private readonly counts = new Map<string, number>();
  constructor(private readonly points = 10) {}
  async consume(key: string) {
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return n > this.points ? 60 : null;
  }
  peek(key: string) {
    return (this.counts.get(key) ?? 0) > this.points ? 60 : null;
  }
}

/** Holds deferred work until `runAll`, so tests can tell what happens before and after the answer. */
export class QueuedDeferrer implements Deferrer {
  readonly queued: { name: string; work: (deps: Deps) => Promise<void> }[] = [];
  defer(name: string, work: (deps: Deps) => Promise<void>) { this.queued.push({ name, work }); }
  async runAll(deps: Deps) {
    for (const { work } of this.queued.splice(0)) await work(deps);
  }
}

export function fakeDeps() {
  const repositories = inMemoryRepositories();
  const clock = new FixedClock();
  return {
    ...repositories, clock, ids: new SequentialIds(), webhookSender: new ScriptedWebhookSender(clock), webhookTargets: allowAllTargets, tokens: new InMemoryTokenService(),
    mailer: new RecordingMailer(), links: { portalSignIn: (token: string) => `http://portal.test/portal/#refresh=${token}` }, loginLimiter: new CountingLoginLimiter(), endpointTestLimiter: new CountingRateLimiter(), requestLimiter: new CountingRateLimiter(1_000_000), streamSlots: new InMemoryStreamSlots(2), deferrer: new QueuedDeferrer(),
    signatures: { matches: (key: string, body: Uint8Array, signature: string) => signature.toLowerCase() === `sig(${key}:${Buffer.from(body).toString()})` },
  } satisfies Deps;
}
export type FakeDeps = ReturnType<typeof fakeDeps>;
