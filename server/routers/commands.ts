import { acceptCommand } from '../../domain/use-cases/accept-command.ts';
import { pollCommandResult } from '../../domain/use-cases/poll-command-result.ts';
import { brandCommands } from './commands.contract.ts';
import { brandProcedure, integratorProcedure, router } from '../trpc.ts';

export const commandsRouter = router({
  send: brandProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v3/commands',
        tags: ['commands'],
        summary: 'Send a brand command; it runs shortly after',
        description:
          'Answers 202 at once; the command then runs exactly once, and its outcome arrives as a CommandResultEvent or ' +
          'CommandErrorEvent at your endpoint and at GET /v3/commands/{cid}. Idempotent per _cid: the same command again gets ' +
          'the first answer and runs nothing; another body with the same _cid is 409. A refused command (4xx) is not stored.',
        successDescription: 'Accepted: stored, to be run.',
      },
      rest: { status: 202, problems: [409], body: brandCommands.union },
      // Its one write (the command, with its `_cid` taken) is one atomic statement: no transaction around it.
      unit: 'statements',
    })
    .input(brandCommands.command)
    .output(brandCommands.accepted)
    .mutation(({ ctx, input }) => acceptCommand(ctx.deps, ctx.principal, input)),

  result: integratorProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/v3/commands/{cid}',
        tags: ['commands'],
        summary: 'The outcome of a command you sent',
        description: 'Brand and partner commands alike. Results are kept for 24 hours after the command ran.',
        successDescription: 'The CommandResultEvent or CommandErrorEvent.',
      },
      rest: { noContent: 'The command is accepted and has not run yet: ask again shortly.', problems: [400, 404] },
    })
    .input(brandCommands.poll)
    .output(brandCommands.outcome)
    .query(({ ctx, input }) => pollCommandResult(ctx.deps, ctx.principal, input.cid)),
});
