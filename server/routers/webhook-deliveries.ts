import {
  getOwnDelivery,
  listOwnDeliveries,
  ownDeliveryStats,
  redeliverOwn,
  redeliverOwnFailed,
} from '../../domain/use-cases/own-deliveries.ts';
import { encodeDeliveryCursor } from '../cursors.ts';
import { guardedProcedure } from '../pipeline/procedures.ts';
import { router } from '../trpc.ts';
import { deliveryDetailView, deliveryView } from '../views.ts';
import { webhookDeliveryRoutes } from './webhook-deliveries.contract.ts';

/** The caller's own delivery log, and replay (CONTRACT §10). Other endpoints' deliveries do not exist for it. */
export const webhookDeliveriesRouter = router({
  list: guardedProcedure
    .meta(webhookDeliveryRoutes.list.meta)
    .input(webhookDeliveryRoutes.list.input)
    .output(webhookDeliveryRoutes.list.output)
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
  stats: guardedProcedure
    .meta(webhookDeliveryRoutes.stats.meta)
    .input(webhookDeliveryRoutes.stats.input)
    .output(webhookDeliveryRoutes.stats.output)
    .query(async ({ ctx, input }) => {
      const { bucket, items } = await ownDeliveryStats(ctx.deps, ctx.principal, input);
      return { bucket, items: items.map((b) => ({ ...b, start: b.start.toISOString() })) };
    }),
  get: guardedProcedure
    .meta(webhookDeliveryRoutes.get.meta)
    .input(webhookDeliveryRoutes.get.input)
    .output(webhookDeliveryRoutes.get.output)
    .query(async ({ ctx, input }) => {
      const {
        accountId: _a,
        scope: _s,
        ...view
      } = deliveryDetailView(await getOwnDelivery(ctx.deps, ctx.principal, input.id));
      return view;
    }),
  redeliver: guardedProcedure
    .meta(webhookDeliveryRoutes.redeliver.meta)
    .input(webhookDeliveryRoutes.redeliver.input)
    .output(webhookDeliveryRoutes.redeliver.output)
    .mutation(({ ctx, input }) => redeliverOwn(ctx.deps, ctx.principal, input.id)),
  redeliverFailed: guardedProcedure
    .meta(webhookDeliveryRoutes.redeliverFailed.meta)
    .input(webhookDeliveryRoutes.redeliverFailed.input)
    .output(webhookDeliveryRoutes.redeliverFailed.output)
    .mutation(({ ctx, input }) => redeliverOwnFailed(ctx.deps, ctx.principal, input.since)),
});
