import { z } from 'zod';
import { SCOPES } from '../../domain/webhook-config.ts';
import type { RouteContract } from './contracts.ts';

/** GET /v3/me: who the caller's token speaks for, by name. */
export const me = {
  answer: z.object({
    role: z.enum(SCOPES),
    account: z.object({
      id: z.string(),
      name: z.string(),
      parentId: z.string().nullable().describe("A child partner's master; null for any other account."),
    }),
    contact: z.object({ id: z.string(), email: z.string().describe('The contact the token was issued to.') }),
  }),
};

export const meRoutes = {
  get: {
    meta: {
      roles: ['brand', 'partner'],
      openapi: {
        method: 'GET',
        path: '/v3/me',
        tags: ['auth'],
        summary: 'Who your token speaks for',
        description: 'Your account (its name, role and master) and the contact the token was issued to, by e-mail.',
        successDescription: 'The account and the contact.',
      },
      rest: { problems: [404] },
    },
    input: z.object({}).optional(),
    output: me.answer,
  },
} satisfies Record<string, RouteContract>;
