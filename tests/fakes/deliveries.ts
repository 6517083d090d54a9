import type { OutboxEvent } from '../../domain/event.ts';
import type { ClaimRequest, Clock, DeliveryLog, DeliveryQueue, EventFeed, EventOutbox, FeedEntry, WebhookRequest, WebhookSender } from '../../domain/ports.ts';
import {
  bucketStart, isSuccess, STATS_BUCKET_MS, type AttemptExchange, type ClaimedDelivery, type DeliveryAttempt, type DeliveryDetail, type DeliveryFilter,
  type DeliveryResult, type DeliveryStats, type DeliveryStatus, type DeliveryView, type SentAttempt, type StatsBucket,
} from '../../domain/delivery.ts';
import { judgeEndpoint, type EndpointNotice } from '../../domain/endpoint-health.ts';
import type { InMemoryWebhookConfigRepository } from './accounts.ts';
import { copy } from './table.ts';

export class InMemoryEventOutbox implements EventOutbox {
  readonly stored: OutboxEvent[] = [];
  constructor(private readonly deliveries: InMemoryDeliveryStore) {}
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
  positionOf(eventId: string) { return this.positions.get(eventId); }
  private readonly purged = new Map<string, number>();
  /** What the retention purge does to the feed: the endpoint's events through `position` are gone. */
  forget(endpointId: string, position: number) { this.purged.set(endpointId, Math.max(this.purged.get(endpointId) ?? 0, position)); }
  async purgedThrough(endpointId: string) { return this.purged.get(endpointId) ?? 0; }
  async page(endpointId: string, afterPosition: number, limit: number, orderId?: string): Promise<FeedEntry[]> {
    return this.outbox.stored
      .filter((e) => e.endpointId === endpointId && (this.positions.get(e.id) ?? 0) > Math.max(afterPosition, this.purged.get(endpointId) ?? 0))
      .filter((e) => orderId === undefined || e.orderId === orderId)
      .map((e) => ({ position: this.positions.get(e.id)!, createdAt: e.createdAt, payload: JSON.stringify(e.payload) }))
      .sort((a, b) => a.position - b.position).slice(0, limit);
  }
}

/** The deliveries both faces below read and change: the sender's queue and the log. */
export class InMemoryDeliveryStore {
  readonly rows: DeliveryRow[] = [];
  private seq = 0;
  create(event: OutboxEvent) {
    this.rows.push({ id: `delivery-${++this.seq}`, seq: this.seq, event: copy(event), status: 'pending', attempts: 0, nextAttemptAt: event.createdAt, leaseUntil: null, claimToken: null, tries: [], createdAt: event.createdAt });
  }
}

/** The sender's queue as the SQL one keeps it: feed order per order, leases, a share per endpoint, a log of tries. */
export class InMemoryDeliveryQueue implements DeliveryQueue {
  constructor(private readonly store: InMemoryDeliveryStore, private readonly configs: InMemoryWebhookConfigRepository, private readonly feed: InMemoryEventFeed) {}
  get rows() { return this.store.rows; }
  async claimDue({ limit, now, leaseUntil, claimToken, perEndpoint, held, lookForNew }: ClaimRequest): Promise<ClaimedDelivery[]> {
    if (lookForNew) await this.feed.sequence(1000);
    const position = (d: DeliveryRow) => this.feed.positionOf(d.event.id);
    const queued = this.rows.filter((d) => d.status === 'pending' && position(d) !== undefined);
    const waits = (d: DeliveryRow) => d.event.orderId !== null
      && queued.some((e) => e.event.endpointId === d.event.endpointId && e.event.orderId === d.event.orderId && position(e)! < position(d)!);
    const due = queued
      .filter((d) => d.nextAttemptAt <= now && (!d.leaseUntil || d.leaseUntil <= now) && !waits(d))
      .sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime() || position(a)! - position(b)!);
    const taken = new Map(held);
    const claimed = due.filter((d) => {
      const n = taken.get(d.event.endpointId!) ?? 0;
      if (n >= perEndpoint) return false;
      taken.set(d.event.endpointId!, n + 1);
      return true;
    }).slice(0, limit);
    return claimed.map((d) => {
      d.leaseUntil = leaseUntil;
      d.claimToken = claimToken;
      const config = this.configs.byId(d.event.endpointId!);
      return { id: d.id, eventId: d.event.id, endpointId: d.event.endpointId!, attempts: d.attempts, body: JSON.stringify(d.event.payload), leaseUntil, claimToken,
        createdAt: d.createdAt, endpoint: config && {
          url: config.url, enabled: config.enabled, signatureKey: config.signatureKey, previousKey: config.previousKey,
          asymmetricSigning: config.asymmetricSigning, signingPair: config.signingPair, previousPair: config.previousPair,
        } };
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
      const endpointId = r.endpointId;
      d.tries.push({ ...r.attempt, exchange: r.exchange && structuredClone(r.exchange) });
      if (r.exchange && r.exchange.request.url === this.configs.byId(endpointId)?.url) answered.set(endpointId, [...(answered.get(endpointId) ?? []), { at: r.attempt.at, ok: isSuccess(r.attempt.statusCode) }]);
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
}

/** The delivery log as the SQL one keeps it. */
export class InMemoryDeliveryLog implements DeliveryLog {
  constructor(private readonly store: InMemoryDeliveryStore, private readonly configs: InMemoryWebhookConfigRepository) {}
  private get rows() { return this.store.rows; }
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
      .filter((d) => (!filter.eventType || d.event.type === filter.eventType) && (filter.orderId === undefined || d.event.orderId === filter.orderId))
      .filter((d) => !before || d.createdAt < before.createdAt || (d.createdAt.getTime() === before.createdAt.getTime() && d.seq < before.seq))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.seq - a.seq).slice(0, filter.limit)
      .map((d) => this.view(d));
  }
  private view(d: DeliveryRow): DeliveryView {
    const lastUrl = [...d.tries].reverse().find((t) => t.exchange)?.exchange?.request.url;
    return {
      id: d.id, seq: d.seq, eventId: d.event.id, eventType: d.event.type, orderId: d.event.orderId, accountId: d.event.accountId, scope: d.event.scope,
      url: lastUrl ?? this.configs.byId(d.event.endpointId!)?.url ?? null, status: d.status, attempts: d.tries.map(({ exchange: _, ...t }) => ({ ...t })),
      createdAt: d.createdAt, nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt : null,
    };
  }
  async stats(endpointId: string, from: Date, to: Date, bucket: StatsBucket): Promise<DeliveryStats[]> {
    const step = STATS_BUCKET_MS[bucket];
    const tries = this.rows.filter((d) => d.event.endpointId === endpointId).flatMap((d) => d.tries).filter((t) => t.exchange !== null);
    const out: DeliveryStats[] = [];
    for (let start = bucketStart(from, bucket).getTime(); start <= bucketStart(to, bucket).getTime(); start += step) {
      const here = tries.filter((t) => t.at.getTime() >= start && t.at.getTime() < start + step);
      const durations = here.map((t) => Math.round(t.durationMs)).sort((a, b) => a - b);
      const percentile = (p: number) => (durations.length === 0 ? null : durations[Math.max(0, Math.ceil(p * durations.length) - 1)]!);
      const succeeded = here.filter((t) => isSuccess(t.statusCode)).length;
      out.push({ start: new Date(start), attempts: here.length, succeeded, failed: here.length - succeeded, p50Ms: percentile(0.5), p99Ms: percentile(0.99) });
    }
    return out;
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
