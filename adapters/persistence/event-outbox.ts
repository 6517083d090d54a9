import type { EntityManager } from '@mikro-orm/postgresql';
import { OutboxEvent } from '../../domain/event.ts';
import type { EventOutbox } from '../../domain/ports.ts';
import type { CurrentTrace } from '../../domain/trace.ts';
import { json } from './command-log.ts';
import { withDriverConnection } from './driver.ts';
import type { WorkNotices } from './wake-ups/notices.ts';

// Events and their deliveries are written at once, one statement each, on the unit of work's connection: an event
// and its delivery commit with the change that caused them.
// Events take their seq in the order they were emitted (with ordinality): the feed sequencer positions one
// transaction's events in seq order, and one order's deliveries go out in feed order.
const INSERT_EVENTS = `
  insert into events (id, account_id, scope, type, order_id, payload, endpoint_id, created_at, traceparent)
  select id, account_id, scope, type, order_id, payload, endpoint_id, created_at, traceparent
  from unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::json[], $7::uuid[], $8::timestamptz[],
      $9::text[])
    with ordinality as e(id, account_id, scope, type, order_id, payload, endpoint_id, created_at, traceparent, n)
  order by n`;
const INSERT_DELIVERIES = `
  insert into deliveries (id, event_id, endpoint_id, account_id, order_id, status, attempts, next_attempt_at, created_at, updated_at)
  select gen_random_uuid(), e.id, e.endpoint_id, e.account_id, e.order_id, 'pending', 0, e.created_at, e.created_at, e.created_at
  from events e where e.id = any($1::uuid[]) and e.created_at = any($2::timestamptz[])
  order by e.seq`;

interface EventRow {
  id: string;
  account_id: string;
  scope: OutboxEvent['scope'];
  type: OutboxEvent['type'];
  order_id: string | null;
  payload: unknown;
  endpoint_id: string | null;
  deliver: boolean;
  created_at: string;
}

/**
 * The outbox of one unit of work: events are gathered as the use case emits them and written together, with their
 * deliveries, when the work is done and before it commits (`writePending`), in two statements whatever their number.
 */
export class SqlEventOutbox implements EventOutbox {
  private pending: OutboxEvent[] = [];
  /** Each pending event's trace context, taken as it was emitted: one unit may run the work of several traces. */
  private traces: (string | null)[] = [];
  constructor(
    private readonly em: EntityManager,
    private readonly notices: WorkNotices,
    private readonly trace: CurrentTrace,
  ) {}

  async add(events: readonly OutboxEvent[]): Promise<void> {
    this.pending.push(...events);
    const trace = this.trace();
    for (const _ of events) this.traces.push(trace);
  }

  /** Forgets the events of work that was rolled back. */
  discardPending(): void {
    this.pending = [];
    this.traces = [];
  }

  async writePending(): Promise<void> {
    const events = this.pending;
    const traces = this.traces;
    this.pending = [];
    this.traces = [];
    if (events.length === 0) return;
    const delivered = events.filter((e) => e.deliver);
    await withDriverConnection(this.em, async (client) => {
      await client.query(INSERT_EVENTS, [
        events.map((e) => e.id),
        events.map((e) => e.accountId),
        events.map((e) => e.scope),
        events.map((e) => e.type),
        events.map((e) => e.orderId),
        events.map((e) => JSON.stringify(e.payload)),
        events.map((e) => e.endpointId),
        events.map((e) => e.createdAt),
        traces,
      ]);
      if (delivered.length > 0) {
        // Their times as well as their ids: the events are read back from their days' partitions alone.
        const times = [...new Set(delivered.map((e) => e.createdAt.getTime()))].map((t) => new Date(t));
        await client.query(INSERT_DELIVERIES, [delivered.map((e) => e.id), times]);
      }
    });
    if (delivered.length > 0) this.notices.created('deliveries');
  }

  async recentFor(accountId: string, limit: number): Promise<OutboxEvent[]> {
    const rows = await this.em.execute<EventRow[]>(
      `select e.id, e.account_id, e.scope, e.type, e.order_id, e.payload, e.endpoint_id, e.created_at,
         exists (select 1 from deliveries d where d.event_id = e.id and d.created_at = e.created_at) as deliver
       from events e where e.account_id = ? order by e.seq desc limit ?`,
      [accountId, limit],
    );
    return rows.map(
      (r) =>
        new OutboxEvent({
          id: r.id,
          accountId: r.account_id,
          scope: r.scope,
          type: r.type,
          orderId: r.order_id,
          payload: json(r.payload),
          endpointId: r.endpoint_id,
          deliver: r.deliver,
          createdAt: new Date(r.created_at),
        }),
    );
  }
}
