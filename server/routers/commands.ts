import { acceptCommand } from '../../domain/use-cases/accept-command.ts';
import { pollCommandResult } from '../../domain/use-cases/poll-command-result.ts';
import { guardedProcedure } from '../pipeline/procedures.ts';
import { router } from '../trpc.ts';
import { commandRoutes } from './commands.contract.ts';

export const commandsRouter = router({
  send: guardedProcedure
    .meta(commandRoutes.send.meta)
    .input(commandRoutes.send.input)
    .output(commandRoutes.send.output)
    .mutation(({ ctx, input }) => acceptCommand(ctx.deps, ctx.principal, input)),

  result: guardedProcedure
    .meta(commandRoutes.result.meta)
    .input(commandRoutes.result.input)
    .output(commandRoutes.result.output)
    .query(({ ctx, input }) => pollCommandResult(ctx.deps, ctx.principal, input.cid)),
});
