// What tests of webhook delivery share: brands with an endpoint, their events, and a check that all arrived.
import type { OutboxEvent } from '../../domain/event.ts';
import { eventFor, receiverOf } from '../../domain/receivers.ts';
import type { testApp } from './app.ts';
import type { Received } from './receiver.ts';

type App = Awaited<ReturnType<typeof testApp>>;

/** A brand whose endpoint is `url`: its id. */
export async function brandWithEndpoint(app: Pick<App, 'admin'>, url: string): Promise<string> {
  const brandId = (await app.admin.call<{ id: string }>('accounts.create', { name: 'Bulk brand', role: 'brand' })).id;
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brandId,
    scope: 'brand',
    url,
    transformer: 'default',
    version: '1.3.0',
  });
  return brandId;
}

/** `orders` orders of the brand, `perOrder` events each, written in batches: their ids in order. */
export async function writeEventsOf(app: App, brandId: string, orders: number, perOrder: number) {
  const ids: { id: string; orderId: string }[] = [];
  for (let n = 0; n < perOrder; n++) {
    await app.services.unitOfWork().transaction(async (deps) => {
      const brand = await receiverOf(deps, brandId, 'brand');
      const events: OutboxEvent[] = [];
      for (let o = 0; o < orders; o++) {
        const orderId = `bulk-${brandId.slice(0, 8)}-${o}`;
        events.push(
          eventFor(deps, brand, 'OrderStatusEvent', orderId, (eid, format) => ({
            _eid: eid,
            _type: 'OrderStatusEvent',
            _v: format.version,
            orderId,
            n,
          })),
        );
      }
      await deps.events.add(events);
      ids.push(...events.map((e) => ({ id: e.id, orderId: e.orderId! })));
    });
  }
  return ids;
}

/** A brand whose endpoint is the receiver, with `orders` orders of `perOrder` events each: their ids in order. */
export async function writeEvents(app: App, receiverUrl: string, orders: number, perOrder: number) {
  return writeEventsOf(app, await brandWithEndpoint(app, receiverUrl), orders, perOrder);
}

/** Whether every one of the events has arrived at a receiver, by its `webhook-id`. */
export const receivedAll = (events: readonly { id: string }[]) => (received: Received[]) => {
  const got = new Set(received.map((r) => String(r.headers['webhook-id'])));
  return events.every((e) => got.has(e.id));
};
