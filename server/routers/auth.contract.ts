import { z } from 'zod';
import { ACCESS_TOKEN_LIFETIME } from '../../domain/auth.ts';
import { wireString } from '../wire-text.ts';
import type { RouteContract } from './contracts.ts';
import { exactNumber } from './shared.contract.ts';

export const auth = {
  login: z.strictObject({ email: wireString().max(254).describe('The e-mail address of a contact with API access.') }),
  loginAnswer: z.object({ status: z.string() }),
  // A POST without a body is the same as {} (CONTRACT §4): the body is optional.
  accessToken: z
    .strictObject({
      expires_after: exactNumber(z.number().int().min(ACCESS_TOKEN_LIFETIME.min).max(ACCESS_TOKEN_LIFETIME.max))
        .optional()
        .describe(
          `Lifetime of the access token in seconds (${ACCESS_TOKEN_LIFETIME.min}–${ACCESS_TOKEN_LIFETIME.max}, default ${ACCESS_TOKEN_LIFETIME.default}).`,
        ),
    })
    .optional(),
  accessTokenAnswer: z.object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().min(ACCESS_TOKEN_LIFETIME.min).max(ACCESS_TOKEN_LIFETIME.max),
  }),
};

export const authRoutes = {
  login: {
    meta: {
      openapi: {
        method: 'POST',
        path: '/v3/auth/login',
        tags: ['auth'],
        summary: 'Request a refresh token by e-mail',
        description:
          'Always answers the same message; a refresh token (valid 24 h) is mailed only to contacts with API access. ' +
          'At most LOGIN_LIMIT_PER_EMAIL a minute per address and LOGIN_LIMIT_PER_ADDRESS per client (429 beyond).',
      },
      rest: { problems: [429] },
      unit: 'statements',
    },
    input: auth.login,
    output: auth.loginAnswer,
  },
  accessToken: {
    meta: {
      openapi: {
        method: 'POST',
        path: '/v3/auth/access-token',
        tags: ['auth'],
        summary: 'Exchange a refresh token (Authorization: Bearer <refresh token>) for an access token',
      },
      rest: { bearer: 'refresh' },
      unit: 'statements',
    },
    input: auth.accessToken,
    output: auth.accessTokenAnswer,
  },
} satisfies Record<string, RouteContract>;
