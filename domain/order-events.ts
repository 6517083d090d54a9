import { OutboxEvent } from './event.ts';
import type { Job } from './job.ts';
import { partnerConfigOf } from './partner-scope.ts';
import { renderOrderStatus } from './payloads.ts';
import type { Deps } from './ports.ts';
import { defaultFormatFor } from './webhook-config.ts';

type EventDeps = Pick<Deps, 'accounts' | 'webhookConfigs' | 'events' | 'ids' | 'clock'>;

/**
 * Every change to a job emits one OrderStatusEvent per receiver: the owning brand, and the partner the
 * job is assigned to now, each rendered in the shape and version of its own configuration.
 */
export async function emitOrderStatus(deps: EventDeps, job: Job): Promise<OutboxEvent[]> {
  const now = deps.clock.now();
  const events: OutboxEvent[] = [];
  const event = (accountId: string, scope: 'brand' | 'partner', format = defaultFormatFor(scope)) => {
    const id = deps.ids.newId();
    events.push(new OutboxEvent({
      id, accountId, scope, type: 'OrderStatusEvent', orderId: job.apiId,
      payload: renderOrderStatus(job, format, id), createdAt: now,
    }));
  };

  const brandConfig = await deps.webhookConfigs.find(job.brandAccountId, 'brand');
  event(job.brandAccountId, 'brand', brandConfig?.payloadFormat());
  if (job.partnerId) {
    const config = partnerConfigOf(await deps.accounts.partnerFamily(job.partnerId));
    event(job.partnerId, 'partner', config?.payloadFormat());
  }
  await deps.events.add(events);
  return events;
}
