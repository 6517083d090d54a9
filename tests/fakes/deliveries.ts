import {
  type AttemptExchange,
  type ClaimedDelivery,
  type DeliveryAttempt,
  type DeliveryResult,
  type DeliveryStatus,
  isSuccess,
  type SentAttempt,
} from '../../domain/delivery.ts';
import { type EndpointNotice, judgeEndpoint } from '../../domain/endpoint-health.ts';
import type { OutboxEvent } from '../../domain/event.ts';
import type {
  ClaimRequest,
  Clock,
  DeliveryQueue,
  EventFeed,
  EventOutbox,
  FeedRead,
  WebhookRequest,
  WebhookSender,
} from '../../domain/ports.ts';
import type { WebhookConfig } from '../../domain/webhook-config.ts';
import type { InMemoryWebhookConfigRepository } from './accounts.ts';
import { copy } from './table.ts';

export { InMemoryDeliveryLog } from './delivery-log.ts';

export class InMemoryEventOutbox implements EventOutbox {
  readonly stored: OutboxEvent[] = [];
  constructor(private readonly deliveries: InMemoryDeliveryStore) {}
  async add(events: readonly OutboxEvent[]) {
    this.stored.push(...events.map(copy));
    for (const e of events) if (e.deliver) this.deliveries.create(e);
  }
  async recentFor(accountId: string, limit: number) {
    return this.stored
      .filter((e) => e.accountId === accountId)
      .reverse()
      .slice(0, limit)
      .map(copy);
  }
}

export interface DeliveryRow {
  id: string;
  seq: number;
  event: OutboxEvent;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date;
  leaseUntil: Date | null;
  claimToken: string | null;
  tries: (DeliveryAttempt & { exchange: AttemptExchange | null })[];
  createdAt: Date;
}

/** The feed as the SQL one keeps it: positions given to stored events in the order they were stored. */
export class InMemoryEventFeed implements EventFeed {
  private readonly positions = new Map<string, number>();
  constructor(private readonly outbox: InMemoryEventOutbox) {}
  async sequence(limit: number, _waitForRound?: boolean) {
    const pending = this.outbox.stored.filter((e) => e.endpointId && !this.positions.has(e.id)).slice(0, limit);
    for (const e of pending) this.positions.set(e.id, this.positions.size + 1);
    return pending.length;
  }
  positionOf(eventId: string) {
    return this.positions.get(eventId);
  }
  private readonly purged = new Map<string, number>();
  /** What the retention purge does to the feed: the endpoint's events through `position` are gone. */
  forget(endpointId: string, position: number) {
    this.purged.set(endpointId, Math.max(this.purged.get(endpointId) ?? 0, position));
  }
  async page(endpointId: string, afterPosition: number, limit: number, orderId?: string): Promise<FeedRead> {
    const entries = this.outbox.stored
      .filter(
        (e) =>
          e.endpointId === endpointId &&
          (this.positions.get(e.id) ?? 0) > Math.max(afterPosition, this.purged.get(endpointId) ?? 0),
      )
      .filter((e) => orderId === undefined || e.orderId === orderId)
      .map((e) => ({ position: this.positions.get(e.id)!, createdAt: e.createdAt, payload: JSON.stringify(e.payload) }))
      .sort((a, b) => a.position - b.position)
      .slice(0, limit);
    return { entries, purgedThrough: this.purged.get(endpointId) ?? 0 };
  }
}

/** The deliveries both faces read and change: the sender's queue below and the log (delivery-log.ts). */
/**
 * Whether a row's endpoint is disabled or without a URL: what it has waiting is kept as it is (CONTRACT §11). One whose
 * endpoint is gone is not paused (it is handed out, and fails).
 */
export function pausedRow(configs: InMemoryWebhookConfigRepository, d: DeliveryRow) {
  const config = configs.byId(d.event.endpointId!);
  return config != null && !(config.enabled && config.url);
}

export class InMemoryDeliveryStore {
  readonly rows: DeliveryRow[] = [];
  private seq = 0;
  create(event: OutboxEvent) {
    this.rows.push({
      id: `delivery-${++this.seq}`,
      seq: this.seq,
      event: copy(event),
      status: 'pending',
      attempts: 0,
      nextAttemptAt: event.createdAt,
      leaseUntil: null,
      claimToken: null,
      tries: [],
      createdAt: event.createdAt,
    });
  }
}

/** The sender's queue as the SQL one keeps it: feed order per order, leases, a share per endpoint, a log of tries. */
export class InMemoryDeliveryQueue implements DeliveryQueue {
  constructor(
    private readonly store: InMemoryDeliveryStore,
    private readonly configs: InMemoryWebhookConfigRepository,
    private readonly feed: InMemoryEventFeed,
  ) {}
  get rows() {
    return this.store.rows;
  }
  async claimDue({
    limit,
    now,
    leaseUntil,
    claimToken,
    perEndpoint,
    held,
    lookForNew,
  }: ClaimRequest): Promise<ClaimedDelivery[]> {
    if (lookForNew) await this.feed.sequence(1000);
    const position = (d: DeliveryRow) => this.feed.positionOf(d.event.id);
    const queued = this.rows.filter((d) => d.status === 'pending' && position(d) !== undefined);
    const waits = (d: DeliveryRow) =>
      d.event.orderId !== null &&
      queued.some(
        (e) =>
          e.event.endpointId === d.event.endpointId &&
          e.event.orderId === d.event.orderId &&
          position(e)! < position(d)!,
      );
    const due = queued
      .filter(
        (d) =>
          d.nextAttemptAt <= now && (!d.leaseUntil || d.leaseUntil <= now) && !waits(d) && !pausedRow(this.configs, d),
      )
      .sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime() || position(a)! - position(b)!);
    const taken = new Map(held);
    const claimed = due
      .filter((d) => {
        const n = taken.get(d.event.endpointId!) ?? 0;
        if (n >= perEndpoint) return false;
        taken.set(d.event.endpointId!, n + 1);
        return true;
      })
      .slice(0, limit);
    return claimed.map((d) => {
      d.leaseUntil = leaseUntil;
      d.claimToken = claimToken;
      const config = this.configs.byId(d.event.endpointId!);
      return {
        id: d.id,
        eventId: d.event.id,
        endpointId: d.event.endpointId!,
        attempts: d.attempts,
        body: JSON.stringify(d.event.payload),
        leaseUntil,
        claimToken,
        createdAt: d.createdAt,
        endpoint: config && {
          url: config.url,
          enabled: config.enabled,
          failingSince: config.failingSince,
          signatureKey: config.signatureKey,
          previousKey: config.previousKey,
          asymmetricSigning: config.asymmetricSigning,
          signingPair: config.signingPair,
          previousPair: config.previousPair,
        },
      };
    });
  }
  async release(claims: readonly Pick<ClaimedDelivery, 'id' | 'claimToken'>[]) {
    for (const c of claims) {
      const d = this.rows.find((x) => x.id === c.id);
      if (d && d.claimToken === c.claimToken) Object.assign(d, { leaseUntil: null, claimToken: null });
    }
  }

  /** Nothing to set right: the fake keeps no flags, it judges each claim afresh. */
  async settle() {
    return 0;
  }

  async record(results: readonly DeliveryResult[], at: Date, disableAfterMs: number): Promise<EndpointNotice[]> {
    const answered = new Map<string, { at: Date; ok: boolean }[]>();
    const endedFailed = new Map<string, number>();
    // A record made again (its answer lost) logs no try twice, and judges nothing by it again.
    const loggedBefore = new Map(
      results.map((r) => [r.deliveryId, this.rows.find((x) => x.id === r.deliveryId)!.tries.map((t) => +t.at)]),
    );
    for (const r of results) {
      const d = this.rows.find((x) => x.id === r.deliveryId)!;
      const endpointId = r.endpointId;
      const again = loggedBefore.get(r.deliveryId)!.includes(+r.attempt.at);
      if (!again) d.tries.push({ ...r.attempt, exchange: r.exchange && structuredClone(r.exchange) });
      if (!again && r.exchange && r.exchange.request.url === this.configs.byId(endpointId)?.url)
        answered.set(endpointId, [
          ...(answered.get(endpointId) ?? []),
          { at: r.attempt.at, ok: isSuccess(r.attempt.statusCode) },
        ]);
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
      answered.set(endpointId, [...(answered.get(endpointId) ?? []), ...this.loggedOkAfterAFailure(config, answered)]);
      const verdict = judgeEndpoint(
        config,
        answered.get(endpointId) ?? [],
        endedFailed.get(endpointId) ?? 0,
        at,
        disableAfterMs,
      );
      this.configs.setHealth(endpointId, {
        failingSince: verdict.failingSince,
        enabled: config.enabled && !verdict.disable,
        disabledReason: verdict.disable ? 'failing' : config.disabledReason,
        failureMailedAt: verdict.disable || verdict.warn ? at : config.failureMailedAt,
      });
      if (verdict.disable || verdict.warn) {
        notices.push({
          kind: verdict.disable ? 'disabled' : 'failing',
          endpointId,
          accountId: config.accountId,
          url: config.url,
          failingSince: verdict.failingSince!,
          failedDeliveries: this.rows.filter((x) => x.event.endpointId === endpointId && x.status === 'failed').length,
        });
      }
    }
    return notices;
  }
  /** The 2xx already logged at the endpoint's URL after the batch's first failure there (recorded first). */
  private loggedOkAfterAFailure(config: WebhookConfig, answered: Map<string, { at: Date; ok: boolean }[]>) {
    const bad = (answered.get(config.id) ?? []).filter((a) => !a.ok).map((a) => +a.at);
    const firstBad = Math.min(...bad, Infinity);
    return this.rows
      .filter((d) => d.event.endpointId === config.id)
      .flatMap((d) => d.tries)
      .filter((t) => isSuccess(t.statusCode) && t.exchange?.request.url === config.url && +t.at > firstBad)
      .map((t) => ({ at: t.at, ok: true }));
  }
}

/** A receiver scripted by status codes (null: no answer), recording what was sent. */
export class ScriptedWebhookSender implements WebhookSender {
  readonly sent: WebhookRequest[] = [];
  constructor(
    private readonly clock: Clock,
    private readonly script: (request: WebhookRequest, n: number) => number | null = () => 200,
  ) {}
  async send(request: WebhookRequest): Promise<SentAttempt> {
    this.sent.push({ ...request });
    const statusCode = this.script(request, this.sent.length);
    const exchange = {
      request: { url: request.url, headers: { 'webhook-id': request.eventId } },
      response: statusCode === null ? null : { headers: {}, body: '' },
    };
    return {
      at: this.clock.now(),
      statusCode,
      durationMs: 1,
      error: statusCode !== null && statusCode < 300 ? null : `HTTP ${statusCode}`,
      exchange,
    };
  }
}
