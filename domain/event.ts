import type { Scope } from './webhook-config.ts';

/** The largest payload an event may have (UTF-8 bytes of its JSON): events are kept for weeks and sent to receivers. */
export const MAX_EVENT_BYTES = 256 * 1024;

export const EVENT_TYPES = ['OrderStatusEvent', 'InvoiceEvent', 'CommandResultEvent', 'CommandErrorEvent'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface OutboxEventProps {
  /** `_eid` of the payload, and the `webhook-id` of its deliveries. */
  id: string;
  /** The receiving account and the scope of its configuration that the payload was rendered for. */
  accountId: string;
  scope: Scope;
  type: EventType;
  /** The job's apiId for order events, so that deliveries of one order can keep their order. */
  orderId: string | null;
  payload: Record<string, unknown>;
  /** The configuration the receiver's events go to (its own, or a child's master's); null when it has none. */
  endpointId: string | null;
  /** Whether a delivery is made: the endpoint has a URL and is enabled as the event is written (none made up later). */
  deliver: boolean;
  createdAt: Date;
}

/** An event stored in the same transaction as the change that caused it (transactional outbox). */
export class OutboxEvent {
  id!: string;
  accountId!: string;
  scope!: Scope;
  type!: EventType;
  orderId!: string | null;
  payload!: Record<string, unknown>;
  endpointId!: string | null;
  deliver!: boolean;
  createdAt!: Date;

  constructor(props: OutboxEventProps) {
    Object.assign(this, props);
  }
}
