import { notFound } from '../errors.ts';
import type { CommandState, Deps } from '../ports.ts';

/** admin.commands.get: a command of an account by its `_cid`, in whatever state, its result included once it ran. */
export async function lookUpCommand(
  deps: Pick<Deps, 'commands'>,
  accountId: string,
  cid: string,
): Promise<CommandState> {
  const state = await deps.commands.result(accountId, cid);
  if (!state) throw notFound('A command with this _cid');
  return state;
}
