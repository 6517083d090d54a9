import type { z } from 'zod';
import type { Principal } from '../../domain/auth.ts';
import { PAGE_SIZE } from '../../domain/orders.ts';
import type { Deps } from '../../domain/ports.ts';
import { listPartnerOrdersPage, streamPartnerOrders } from '../../domain/use-cases/list-partner-orders.ts';
import { pollOrder } from '../../domain/use-cases/poll-order.ts';
import { guardedProcedure } from '../pipeline/procedures.ts';
import { router } from '../trpc.ts';
import { partnerOrderRoutes } from './partner-orders.contract.ts';

// One guard and one input for the legacy listing, whichever face serves it.
const legacyListing = guardedProcedure.meta(partnerOrderRoutes.legacy.meta).input(partnerOrderRoutes.legacy.input);
type LegacyInput = z.output<typeof partnerOrderRoutes.legacy.input>;
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
  paginated: guardedProcedure
    .meta(partnerOrderRoutes.paginated.meta)
    .input(partnerOrderRoutes.paginated.input)
    .output(partnerOrderRoutes.paginated.output)
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
  legacy: legacyListing.output(partnerOrderRoutes.legacy.output).query(async ({ ctx, input }) => {
    const items = [];
    for await (const batch of await legacyBatches(ctx, input)) items.push(...batch);
    return items;
  }),

  poll: guardedProcedure
    .meta(partnerOrderRoutes.poll.meta)
    .input(partnerOrderRoutes.poll.input)
    .output(partnerOrderRoutes.poll.output)
    .query(({ ctx, input }) => pollOrder(ctx.deps, ctx.principal, input)),
});
