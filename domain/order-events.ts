import type { OutboxEvent } from './event.ts';
import type { Job } from './job.ts';
import { renderOrderStatus } from './payloads.ts';
import type { Deps } from './ports.ts';
import { eventFor, receiverOf } from './receivers.ts';

type EventDeps = Pick<Deps, 'accounts' | 'webhookConfigs' | 'events' | 'ids' | 'clock'>;

/**
 * Every change to a job emits one OrderStatusEvent per receiver: the owning brand, and the partner the job is
 * assigned to now, each rendered in the shape and version of its own configuration. A re-emission for the brand
 * (RefreshOrder) names only the brand.
 */
export async function emitOrderStatus(
  deps: EventDeps,
  job: Job,
  to: 'brand and partner' | 'brand' = 'brand and partner',
): Promise<OutboxEvent[]> {
  const receivers = [await receiverOf(deps, job.brandAccountId, 'brand')];
  if (to === 'brand and partner' && job.partnerId) receivers.push(await receiverOf(deps, job.partnerId, 'partner'));
  const events = receivers.map((receiver) =>
    eventFor(deps, receiver, 'OrderStatusEvent', job.apiId, (eid, format) => renderOrderStatus(job, format, eid)),
  );
  await deps.events.add(events);
  return events;
}
