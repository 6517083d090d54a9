import { whoAmI } from '../../domain/use-cases/who-am-i.ts';
import { guardedProcedure } from '../pipeline/procedures.ts';
import { router } from '../trpc.ts';
import { meRoutes } from './me.contract.ts';

/** Who the caller is, by name (our addition to CONTRACT §10, for the portal's header). */
export const meRouter = router({
  get: guardedProcedure
    .meta(meRoutes.get.meta)
    .input(meRoutes.get.input)
    .output(meRoutes.get.output)
    .query(({ ctx }) => whoAmI(ctx.deps, ctx.principal)),
});
