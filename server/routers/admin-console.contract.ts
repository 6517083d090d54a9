import { z } from 'zod';
import { ENDPOINT_HEALTH_FILTERS } from '../../domain/ports/operators.ts';
import { ENDPOINT_LIST_LIMIT } from '../../domain/use-cases/list-endpoints.ts';
import { ACCOUNT_SEARCH_LIMIT } from '../../domain/use-cases/search-accounts.ts';
import { DELIVERY_SEARCH_LIMIT, type DeliverySearch } from '../../domain/use-cases/search-deliveries.ts';
import { reference } from '../wire-text.ts';
import { id, text } from './shared.contract.ts';

// The operator console's procedures (docs/operators.md, "The operator console"): reads across accounts.

const limit = (max: number) => z.number().int().min(1).max(max).optional();

const deliverySearch = z
  .strictObject({
    orderId: reference().optional(),
    eventId: reference().optional(),
    cid: reference().optional(),
    limit: limit(DELIVERY_SEARCH_LIMIT.max),
  })
  .superRefine((input, ctx) => {
    const given = [input.orderId, input.eventId, input.cid].filter((v) => v !== undefined).length;
    if (given !== 1) ctx.addIssue({ code: 'custom', message: 'Give exactly one of orderId, eventId and cid.' });
  })
  .transform(({ limit, ...by }) => ({ by: by as DeliverySearch, limit }));

export const consoleInputs = {
  searchAccounts: z.strictObject({ text: text(254), limit: limit(ACCOUNT_SEARCH_LIMIT.max) }),
  getAccount: z.strictObject({ accountId: id }),
  listWebhookConfigs: z
    .strictObject({ health: z.enum(ENDPOINT_HEALTH_FILTERS).optional(), limit: limit(ENDPOINT_LIST_LIMIT.max) })
    .optional(),
  searchDeliveries: deliverySearch,
  findCommands: z.strictObject({ cid: reference() }),
  getJob: z.strictObject({ apiId: text(100) }),
  gauges: z.strictObject({}).optional(),
};
