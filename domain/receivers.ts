import { DomainError } from './errors.ts';
import { type EventType, MAX_EVENT_BYTES, OutboxEvent } from './event.ts';
import { partnerConfigOf } from './partner-scope.ts';
import type { Deps } from './ports.ts';
import { defaultFormatFor, type PayloadFormat, type Scope, type WebhookConfig } from './webhook-config.ts';

/** Who receives an event, and where: the account, the scope it receives in, and the configuration that serves it. */
export interface Receiver {
  accountId: string;
  scope: Scope;
  /** A brand's own configuration; a partner's own, else its master's (CONTRACT §6). */
  endpoint: WebhookConfig | null;
}

export async function receiverOf(
  deps: Pick<Deps, 'accounts' | 'webhookConfigs'>,
  accountId: string,
  scope: Scope,
): Promise<Receiver> {
  const endpoint =
    scope === 'brand'
      ? await deps.webhookConfigs.find(accountId, 'brand')
      : partnerConfigOf(await deps.accounts.partnerFamily(accountId));
  return { accountId, scope, endpoint };
}

/** The shape and version a receiver's payloads take: its configuration's, else the default of its scope. */
export const payloadFormatOf = (receiver: Receiver): PayloadFormat =>
  receiver.endpoint?.payloadFormat() ?? defaultFormatFor(receiver.scope);

/**
 * The one way an event is made: rendered for its receiver, with a delivery when the receiver's endpoint has a URL
 * and is enabled now. Stored with `deps.events.add` in the unit of work of the change that caused it.
 */
export function eventFor(
  deps: Pick<Deps, 'ids' | 'clock'>,
  receiver: Receiver,
  type: EventType,
  orderId: string | null,
  render: (eid: string, format: PayloadFormat) => Record<string, unknown>,
): OutboxEvent {
  const id = deps.ids.newId();
  const { endpoint } = receiver;
  const payload = render(id, payloadFormatOf(receiver));
  refuseOversized(payload);
  return new OutboxEvent({
    id,
    accountId: receiver.accountId,
    scope: receiver.scope,
    type,
    orderId,
    payload,
    endpointId: endpoint?.id ?? null,
    deliver: Boolean(endpoint?.url && endpoint.enabled),
    createdAt: deps.clock.now(),
  });
}

const utf8 = new TextEncoder();

/**
 * Every stored event is bounded: it is kept for the retention window and sent to a receiver, so a change whose event
 * would exceed MAX_EVENT_BYTES is refused (and nothing of it is stored), whichever input could make it so large.
 */
function refuseOversized(payload: Record<string, unknown>) {
  const bytes = utf8.encode(JSON.stringify(payload)).length;
  if (bytes > MAX_EVENT_BYTES) {
    throw new DomainError(
      'VALIDATION_FAILED',
      `The ${String(payload._type)} this change makes would be ${bytes} bytes, ` +
        `more than the ${MAX_EVENT_BYTES} an event may hold: make the order's content smaller.`,
      [{ path: '', message: 'the event would be too large' }],
    );
  }
}
