import {
  getOwnDelivery,
  listOwnDeliveries,
  ownDeliveryStats,
  redeliverOwn,
  redeliverOwnFailed,
} from '../../domain/use-cases/own-deliveries.ts';
import { encodeDeliveryCursor } from '../cursors.ts';
import { webhookDeliveries } from './webhook-deliveries.contract.ts';
import { integratorProcedure, router } from '../trpc.ts';
import { deliveryDetailView, deliveryView } from '../views.ts';

/** The caller's own delivery log, and replay (CONTRACT §10). Other endpoints' deliveries do not exist for it. */
export const webhookDeliveriesRouter = router({
  list: integratorProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/v3/webhook-deliveries',
        tags: ['webhooks'],
        summary: 'Your delivery log, newest first',
        description:
          'Every delivery to your endpoint with every try: when, what your endpoint answered, how long it took.',
        successDescription: 'A page of deliveries.',
      },
      rest: { problems: [400, 403, 404] },
    })
    .input(webhookDeliveries.deliveries)
    .output(webhookDeliveries.deliveriesAnswer)
    .query(async ({ ctx, input }) => {
      const page = await listOwnDeliveries(ctx.deps, ctx.principal, input);
      return {
        items: page.items.map((d) => {
          const { accountId: _a, scope: _s, ...view } = deliveryView(d);
          return view;
        }),
        next: page.next && encodeDeliveryCursor(page.next),
      };
    }),
  // Before `get`: /v3/webhook-deliveries/stats is this operation's, not a delivery's id.
  stats: integratorProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/v3/webhook-deliveries/stats',
        tags: ['webhooks'],
        summary: "Your endpoint's attempts per hour or day",
        description:
          'How your endpoint answered over time: its attempts per UTC hour or day, those answered 2xx and the others, ' +
          "and their durations' median and 99th percentile. Every bucket of the span is listed, empty ones with zeros.",
        successDescription: 'The buckets, oldest first.',
      },
      rest: { problems: [400, 403, 404] },
    })
    .input(webhookDeliveries.stats)
    .output(webhookDeliveries.statsAnswer)
    .query(async ({ ctx, input }) => {
      const { bucket, items } = await ownDeliveryStats(ctx.deps, ctx.principal, input);
      return { bucket, items: items.map((b) => ({ ...b, start: b.start.toISOString() })) };
    }),
  get: integratorProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/v3/webhook-deliveries/{id}',
        tags: ['webhooks'],
        summary: 'One delivery: what was sent and answered',
        description:
          "The delivery as listed, with the exact payload sent and, on each try, the request's URL and headers (signatures " +
          "included) and the answer's headers and first 4096 bytes. Another endpoint's delivery is 404.",
        successDescription: 'The delivery in full.',
      },
      rest: { problems: [400, 403, 404] },
    })
    .input(webhookDeliveries.delivery)
    .output(webhookDeliveries.deliveryAnswer)
    .query(async ({ ctx, input }) => {
      const {
        accountId: _a,
        scope: _s,
        ...view
      } = deliveryDetailView(await getOwnDelivery(ctx.deps, ctx.principal, input.id));
      return view;
    }),
  redeliver: integratorProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v3/webhook-deliveries/{id}/redeliver',
        tags: ['webhooks'],
        summary: 'Send one delivery again',
        description:
          'The same event (same `webhook-id`) is sent again at once; its tries continue in the log. A delivery being ' +
          'sent right now is left to finish. Deliveries of one order still go out in their order.',
        successDescription: 'Pending again.',
      },
      rest: { status: 202, problems: [403, 404] },
    })
    .input(webhookDeliveries.redeliver)
    .output(webhookDeliveries.redeliverAnswer)
    .mutation(({ ctx, input }) => redeliverOwn(ctx.deps, ctx.principal, input.id)),
  redeliverFailed: integratorProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v3/webhook-deliveries/redeliver-failed',
        tags: ['webhooks'],
        summary: 'Send every failed delivery since a time again',
        description:
          'After an outage of your endpoint: every delivery that failed (its retries used up) and was created at or ' +
          "after `since` is sent again, each order's in their order.",
        successDescription: 'How many are pending again.',
      },
      rest: { status: 202, problems: [403, 404] },
    })
    .input(webhookDeliveries.redeliverFailed)
    .output(webhookDeliveries.redeliverFailedAnswer)
    .mutation(({ ctx, input }) => redeliverOwnFailed(ctx.deps, ctx.principal, input.since)),
});
