import { z } from 'zod';
import { whoAmI } from '../../domain/use-cases/who-am-i.ts';
import { integratorProcedure, router } from '../trpc.ts';
import { me } from './me.contract.ts';

/** Who the caller is, by name (our addition to CONTRACT §10, for the portal's header). */
export const meRouter = router({
  get: integratorProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/v3/me',
        tags: ['auth'],
        summary: 'Who your token speaks for',
        description: 'Your account (its name, role and master) and the contact the token was issued to, by e-mail.',
        successDescription: 'The account and the contact.',
      },
      rest: { problems: [404] },
    })
    .input(z.object({}).optional())
    .output(me.answer)
    .query(({ ctx }) => whoAmI(ctx.deps, ctx.principal)),
});
