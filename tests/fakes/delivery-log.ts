// The in-memory delivery log, over the store of deliveries in deliveries.ts (which re-exports it for tests/fakes.ts).

import {
  bucketStart,
  type DeliveryDetail,
  type DeliveryFilter,
  type DeliveryStats,
  type DeliveryView,
  isSuccess,
  STATS_BUCKET_MS,
  type StatsBucket,
} from '../../domain/delivery.ts';
import type { DeliveryLog } from '../../domain/ports.ts';
import type { InMemoryWebhookConfigRepository } from './accounts.ts';
import { type DeliveryRow, type InMemoryDeliveryStore, pausedRow } from './deliveries.ts';

/** The delivery log as the SQL one keeps it. */
export class InMemoryDeliveryLog implements DeliveryLog {
  constructor(
    private readonly store: InMemoryDeliveryStore,
    private readonly configs: InMemoryWebhookConfigRepository,
  ) {}
  private get rows() {
    return this.store.rows;
  }
  async get(deliveryId: string, endpointId?: string): Promise<DeliveryDetail | null> {
    const d = this.rows.find((x) => x.id === deliveryId && (!endpointId || x.event.endpointId === endpointId));
    if (!d) return null;
    return {
      ...this.view(d),
      endpointId: d.event.endpointId!,
      payload: JSON.stringify(d.event.payload),
      attempts: d.tries.map(({ exchange, ...t }) => ({
        ...t,
        request: exchange ? structuredClone(exchange.request) : null,
        response: exchange?.response ? structuredClone(exchange.response) : null,
      })),
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
    const mine = (d: DeliveryRow) =>
      'endpointId' in of ? d.event.endpointId === of.endpointId : d.event.accountId === of.accountId;
    const failed = this.rows.filter((d) => mine(d) && d.status === 'failed' && d.createdAt >= since);
    for (const d of failed)
      Object.assign(d, { status: 'pending', nextAttemptAt: now, leaseUntil: null, claimToken: null });
    return failed.length;
  }
  async list(filter: DeliveryFilter): Promise<DeliveryView[]> {
    const { before } = filter;
    return this.rows
      .filter(
        (d) =>
          (!filter.accountId || d.event.accountId === filter.accountId) &&
          (!filter.endpointId || d.event.endpointId === filter.endpointId) &&
          (!filter.status || d.status === filter.status),
      )
      .filter(
        (d) =>
          (!filter.eventType || d.event.type === filter.eventType) &&
          (filter.orderId === undefined || d.event.orderId === filter.orderId),
      )
      .filter(
        (d) =>
          !before ||
          d.createdAt < before.createdAt ||
          (d.createdAt.getTime() === before.createdAt.getTime() && d.seq < before.seq),
      )
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.seq - a.seq)
      .slice(0, filter.limit)
      .map((d) => this.view(d));
  }
  private view(d: DeliveryRow): DeliveryView {
    const lastUrl = [...d.tries].reverse().find((t) => t.exchange)?.exchange?.request.url;
    return {
      id: d.id,
      seq: d.seq,
      eventId: d.event.id,
      eventType: d.event.type,
      orderId: d.event.orderId,
      accountId: d.event.accountId,
      scope: d.event.scope,
      url: lastUrl ?? this.configs.byId(d.event.endpointId!)?.url ?? null,
      status: d.status,
      attempts: d.tries.map(({ exchange: _, ...t }) => ({ ...t })),
      createdAt: d.createdAt,
      nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt : null,
    };
  }
  async stats(endpointId: string, from: Date, to: Date, bucket: StatsBucket): Promise<DeliveryStats[]> {
    const step = STATS_BUCKET_MS[bucket];
    const tries = this.rows
      .filter((d) => d.event.endpointId === endpointId)
      .flatMap((d) => d.tries)
      .filter((t) => t.exchange !== null);
    const out: DeliveryStats[] = [];
    for (let start = bucketStart(from, bucket).getTime(); start <= bucketStart(to, bucket).getTime(); start += step) {
      const here = tries.filter((t) => t.at.getTime() >= start && t.at.getTime() < start + step);
      const durations = here.map((t) => Math.round(t.durationMs)).sort((a, b) => a - b);
      const percentile = (p: number) =>
        durations.length === 0 ? null : durations[Math.max(0, Math.ceil(p * durations.length) - 1)]!;
      const succeeded = here.filter((t) => isSuccess(t.statusCode)).length;
      out.push({
        start: new Date(start),
        attempts: here.length,
        succeeded,
        failed: here.length - succeeded,
        p50Ms: percentile(0.5),
        p99Ms: percentile(0.99),
      });
    }
    return out;
  }
  async prepareDays(_from: Date) {}

  async purgeBefore(before: Date, limit: number) {
    const paused = (d: DeliveryRow) => pausedRow(this.configs, d) && !d.claimToken;
    const old = this.rows.filter((d) => d.createdAt < before && (d.status !== 'pending' || paused(d))).slice(0, limit);
    for (const d of old) this.rows.splice(this.rows.indexOf(d), 1);
    return old.length;
  }
}
