import type { Principal } from '../auth.ts';
import { DomainError } from '../errors.ts';
import { clampPageSize, type OrderFilter } from '../orders.ts';
import { resolvePollingScope } from '../partner-scope.ts';
import { POLLED_EID, renderOrderStatus } from '../payloads.ts';
import type { Deps } from '../ports.ts';

type ListingDeps = Pick<Deps, 'accounts' | 'partnerOrders'>;

export interface PageQuery extends OrderFilter {
  page: number;
  pageSize: number;
}

/** GET /v3/partner-orders/paginated: one page of the visible scope and the total under the same filters. */
export async function listPartnerOrdersPage(deps: ListingDeps, principal: Principal, query: PageQuery) {
  const { config, partnerIds } = await resolvePollingScope(deps, principal);
  if (config.transformer !== 'partner-format') {
    throw new DomainError(
      'VALIDATION_FAILED',
      'The paginated listing needs a partner configuration with the partner-format transformer.',
      [{ path: 'transformer', message: `The resolved configuration uses "${config.transformer}".` }],
    );
  }
  const pageSize = clampPageSize(query.pageSize);
  const filter = { updatedSince: query.updatedSince, active: query.active };
  const [jobs, total] = await Promise.all([
    deps.partnerOrders.page(partnerIds, filter, (query.page - 1) * pageSize, pageSize),
    deps.partnerOrders.count(partnerIds, filter),
  ]);
  const format = config.payloadFormat();
  return { items: jobs.map((job) => renderOrderStatus(job, format, POLLED_EID)), page: query.page, pageSize, total };
}

export interface LegacyQuery extends OrderFilter {
  limit: number | null;
  offset: number;
}

/**
 * GET /v3/partner-orders: the whole visible scope (or `limit` of it), rendered batch by batch as the caller
 * consumes them, so that memory stays flat however many orders there are. Scope errors surface before the
 * first batch, while an answer can still carry them.
 */
export async function streamPartnerOrders(
  deps: ListingDeps & Pick<Deps, 'streamSlots'>,
  principal: Principal,
  query: LegacyQuery,
) {
  const { config, partnerIds } = await resolvePollingScope(deps, principal);
  const format = config.payloadFormat();
  const filter = { updatedSince: query.updatedSince, active: query.active };
  const batches = query.limit === 0 ? [] : deps.partnerOrders.stream(partnerIds, filter, query.offset, query.limit);
  // Fair use: a listing of a whole scope is long; an account gets a few at once, not the server's every connection.
  // The slot is released when the answer has been read to its end, or abandoned.
  const slot = await deps.streamSlots.take(principal.accountId);
  if (!slot)
    throw new DomainError(
      'RATE_LIMITED',
      'Too many listings of this account are streaming at once: wait for one to end.',
      [],
      1,
    );
  return (async function* () {
    try {
      for await (const jobs of batches) yield jobs.map((job) => renderOrderStatus(job, format, POLLED_EID));
    } finally {
      await slot.release();
    }
  })();
}
