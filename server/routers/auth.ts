import { mintAccessToken } from '../../domain/use-cases/mint-access-token.ts';
import { requestRefreshToken } from '../../domain/use-cases/request-refresh-token.ts';
import { bearerToken } from '../pipeline/credentials.ts';
import { publicProcedure } from '../pipeline/procedures.ts';
import { router } from '../trpc.ts';
import { authRoutes } from './auth.contract.ts';

export const authRouter = router({
  login: publicProcedure
    .meta(authRoutes.login.meta)
    .input(authRoutes.login.input)
    .output(authRoutes.login.output)
    .mutation(({ ctx, input }) =>
      requestRefreshToken(ctx.deps, { email: input.email, clientAddress: ctx.clientAddress }),
    ),

  accessToken: publicProcedure
    .meta(authRoutes.accessToken.meta)
    .input(authRoutes.accessToken.input)
    .output(authRoutes.accessToken.output)
    .mutation(({ ctx, input }) =>
      mintAccessToken(ctx.deps, { refreshToken: bearerToken(ctx.authorization), expiresAfter: input?.expires_after }),
    ),
});
