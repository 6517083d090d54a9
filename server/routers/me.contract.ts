import { z } from 'zod';
import { SCOPES } from '../../domain/webhook-config.ts';

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
