import { PAGE_SIZE } from '../../domain/orders.ts';
import { listPartnerOrdersPage, streamPartnerOrders } from '../../domain/use-cases/list-partner-orders.ts';
import { pollOrder } from '../../domain/use-cases/poll-order.ts';
import { partnerOrders } from '../schemas.ts';
import { integratorProcedure, partnerProcedure, router } from '../trpc.ts';

export const partnerOrdersRouter = router({
  paginated: partnerProcedure
    .meta({ openapi: { method: 'GET', path: '/v3/partner-orders/paginated', tags: ['partner orders'], protect: true,
      summary: 'One page of the orders visible to your account',
      description: 'Ordered by updatedAt descending, then jobApiId. Needs a partner-scoped configuration (yours, else your master\'s) with the partner-format transformer.' } })
    .input(partnerOrders.page)
    .output(partnerOrders.pageAnswer)
    .query(({ ctx, input }) => ctx.services.read((deps) => listPartnerOrdersPage(deps, ctx.principal, {
      page: input.page ?? 1, pageSize: input.pageSize ?? PAGE_SIZE.default, updatedSince: input.updatedSince ?? null, active: input.active ?? false,
    }))),

  // REST clients get this listing streamed by server/routes/legacy-orders.ts (mounted ahead of this path);
  // this procedure describes it in the document and serves typed RPC clients.
  legacy: partnerProcedure
    .meta({ openapi: { method: 'GET', path: '/v3/partner-orders', tags: ['partner orders'], protect: true,
      summary: 'All orders visible to your account (legacy), as a bare array',
      description: 'Same order and filters as the paginated listing; no server-side cap. Streamed as it is read.' } })
    .input(partnerOrders.legacy)
    .output(partnerOrders.legacyAnswer)
    .query(async ({ ctx, input }) => {
      const items = [];
      const batches = await ctx.services.read((deps) => streamPartnerOrders(deps, ctx.principal, {
        limit: input.limit ?? null, offset: input.offset ?? 0, updatedSince: input.updatedSince ?? null, active: input.active ?? false,
      }));
      for await (const batch of batches) items.push(...batch);
      return items;
    }),

  poll: integratorProcedure
    .meta({ openapi: { method: 'GET', path: '/v3/poll/job/{version}/{orderId}', tags: ['partner orders'], protect: true,
      summary: 'The current OrderStatusEvent of one order you can see' } })
    .input(partnerOrders.poll)
    .output(partnerOrders.legacyAnswer.element)
    .query(({ ctx, input }) => ctx.services.read((deps) => pollOrder(deps, ctx.principal, input))),
});
