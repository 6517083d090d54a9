import type { z } from 'zod';
import type { Principal } from '../../domain/auth.ts';
import type { Deps } from '../../domain/ports.ts';
import { PAGE_SIZE } from '../../domain/orders.ts';
import { listPartnerOrdersPage, streamPartnerOrders } from '../../domain/use-cases/list-partner-orders.ts';
import { pollOrder } from '../../domain/use-cases/poll-order.ts';
import { partnerOrders } from './partner-orders.contract.ts';
import { integratorProcedure, partnerProcedure, router } from '../trpc.ts';

// One guard and one input for the legacy listing, whichever face serves it.
const legacyListing = partnerProcedure.input(partnerOrders.legacy);
type LegacyInput = z.output<typeof partnerOrders.legacy>;
const legacyBatches = (ctx: { deps: Deps; principal: Principal }, input: LegacyInput) =>
  streamPartnerOrders(ctx.deps, ctx.principal, {
    limit: input.limit ?? null,
    offset: input.offset ?? 0,
    updatedSince: input.updatedSince ?? null,
    active: input.active ?? false,
  });

/**
 * GET /v3/partner-orders for REST clients: the same procedure, answering the batches themselves, which
 * server/http/legacy-orders.ts writes out as they are read. Not mounted on /trpc.
 */
export const legacyStreamRouter = router({
  stream: legacyListing.query(({ ctx, input }) => legacyBatches(ctx, input)),
});

export const partnerOrdersRouter = router({
  paginated: partnerProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/v3/partner-orders/paginated',
        tags: ['partner orders'],
        summary: 'One page of the orders visible to your account',
        description:
          "Ordered by updatedAt descending, then jobApiId. Needs a partner-scoped configuration (yours, else your master's) with the partner-format transformer.",
      },
      rest: { problems: [400, 403] },
    })
    .input(partnerOrders.page)
    .output(partnerOrders.pageAnswer)
    .query(({ ctx, input }) =>
      listPartnerOrdersPage(ctx.deps, ctx.principal, {
        page: input.page ?? 1,
        pageSize: input.pageSize ?? PAGE_SIZE.default,
        updatedSince: input.updatedSince ?? null,
        active: input.active ?? false,
      }),
    ),

  // Describes the path in the document and serves typed RPC clients; REST clients get the same listing streamed
  // (legacyStreamRouter).
  legacy: legacyListing
    .meta({
      openapi: {
        method: 'GET',
        path: '/v3/partner-orders',
        tags: ['partner orders'],
        summary: 'All orders visible to your account (legacy), as a bare array',
        description: 'Same order and filters as the paginated listing; no server-side cap. Streamed as it is read.',
      },
      rest: { problems: [400, 403] },
    })
    .output(partnerOrders.legacyAnswer)
    .query(async ({ ctx, input }) => {
      const items = [];
      for await (const batch of await legacyBatches(ctx, input)) items.push(...batch);
      return items;
    }),

  poll: integratorProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/v3/poll/job/{version}/{orderId}',
        tags: ['partner orders'],
        summary: 'The current OrderStatusEvent of one order you can see',
        description:
          'A brand sees its own orders, a partner the orders of its polling scope (403 without a partner configuration); ' +
          'any other order is 404.',
      },
      rest: { problems: [400, 403, 404] },
    })
    .input(partnerOrders.poll)
    .output(partnerOrders.legacyAnswer.element)
    .query(({ ctx, input }) => pollOrder(ctx.deps, ctx.principal, input)),
});
