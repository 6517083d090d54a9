import type { CommandEntry, Deps } from '../ports.ts';

export const COMMAND_SEARCH_LIMIT = 20;

/** admin.commands.find: the commands of every account sent under a `_cid`, newest first, with their results. */
export function findCommands(deps: Pick<Deps, 'operatorSearch'>, cid: string): Promise<CommandEntry[]> {
  return deps.operatorSearch.commandsByCid(cid, COMMAND_SEARCH_LIMIT);
}
