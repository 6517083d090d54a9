import { z } from 'zod';
import { PAGE_SIZE } from '../../domain/orders.ts';
import { orderStatusEvent, partnerOrderStatusEvent } from '../openapi/payload-docs.ts';
import { wireString } from '../wire-text.ts';
import type { RouteContract } from './contracts.ts';
import { count, queryBool, queryInt } from './shared.contract.ts';

const orderFilters = {
  updatedSince: z.iso
    .datetime({ offset: true })
    .transform((v) => new Date(v))
    .meta({
      description: 'Only orders with updatedAt >= updatedSince; ISO 8601 with an offset.',
      examples: ['2026-11-01T00:00:00Z'],
    })
    .optional(),
  active: queryBool(
    'true (or 1) leaves out orders that need no partner action ' + '(new, cancelled, closed, completed, invoice sent).',
  ).optional(),
};

export const partnerOrders = {
  page: z.object({
    page: queryInt(1, '1-based page; default 1.').optional(),
    pageSize: queryInt(1, '1…200, default 50; larger values are answered as 200.').optional(),
    ...orderFilters,
  }),
  // Only the partner-format can appear here: the listing refuses any other transformer (400).
  pageAnswer: z.object({
    items: z.array(partnerOrderStatusEvent),
    page: count().min(1),
    pageSize: z.number().int().min(1).max(PAGE_SIZE.max),
    total: count(),
  }),
  legacy: z.object({
    limit: queryInt(0, 'At most this many orders; no server-side cap. Default: all.').optional(),
    offset: queryInt(0, 'Skip the first N orders; default 0.').optional(),
    ...orderFilters,
  }),
  legacyAnswer: z.array(orderStatusEvent),
  poll: z.object({
    version: wireString().meta({
      description: '"*" for your configured version, or 1.0.0, 1.1.0, 1.3.0.',
      examples: ['*'],
    }),
    orderId: wireString().meta({ description: "The order's apiId.", examples: ['demo-job-04'] }),
  }),
};

export const partnerOrderRoutes = {
  paginated: {
    meta: {
      unit: 'replica',
      roles: ['partner'],
      openapi: {
        method: 'GET',
        path: '/v3/partner-orders/paginated',
        tags: ['partner orders'],
        summary: 'One page of the orders visible to your account',
        description:
          'Ordered by updatedAt descending, then jobApiId. Needs a partner-scoped configuration (yours, else your ' +
          "master's) with the partner-format transformer.",
      },
      rest: { problems: [400, 403] },
    },
    input: partnerOrders.page,
    output: partnerOrders.pageAnswer,
  },
  legacy: {
    meta: {
      unit: 'replica',
      roles: ['partner'],
      openapi: {
        method: 'GET',
        path: '/v3/partner-orders',
        tags: ['partner orders'],
        summary: 'All orders visible to your account (legacy), as a bare array',
        description: 'Same order and filters as the paginated listing; no server-side cap. Streamed as it is read.',
      },
      rest: { problems: [400, 403] },
    },
    input: partnerOrders.legacy,
    output: partnerOrders.legacyAnswer,
  },
  poll: {
    meta: {
      unit: 'replica',
      roles: ['brand', 'partner'],
      openapi: {
        method: 'GET',
        path: '/v3/poll/job/{version}/{orderId}',
        tags: ['partner orders'],
        summary: 'The current OrderStatusEvent of one order you can see',
        description:
          'A brand sees its own orders, a partner the orders of its polling scope (403 without a partner ' +
          'configuration); any other order is 404.',
      },
      rest: { problems: [400, 403, 404] },
    },
    input: partnerOrders.poll,
    output: partnerOrders.legacyAnswer.element,
  },
} satisfies Record<string, RouteContract>;
