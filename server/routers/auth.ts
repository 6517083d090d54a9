import { mintAccessToken } from '../../domain/use-cases/mint-access-token.ts';
import { requestRefreshToken } from '../../domain/use-cases/request-refresh-token.ts';
import { auth } from './auth.contract.ts';
import { bearerToken } from '../credentials.ts';
import { publicProcedure, router } from '../trpc.ts';

export const authRouter = router({
  login: publicProcedure
    .meta({
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
    })
    .input(auth.login)
    .output(auth.loginAnswer)
    .mutation(({ ctx, input }) =>
      requestRefreshToken(ctx.deps, { email: input.email, clientAddress: ctx.clientAddress }),
    ),

  accessToken: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v3/auth/access-token',
        tags: ['auth'],
        summary: 'Exchange a refresh token (Authorization: Bearer <refresh token>) for an access token',
      },
      rest: { bearer: 'refresh' },
      unit: 'statements',
    })
    .input(auth.accessToken)
    .output(auth.accessTokenAnswer)
    .mutation(({ ctx, input }) =>
      mintAccessToken(ctx.deps, { refreshToken: bearerToken(ctx.authorization), expiresAfter: input?.expires_after }),
    ),
});
