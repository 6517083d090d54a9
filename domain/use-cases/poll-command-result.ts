import type { Principal } from '../auth.ts';
import { RESULT_RETENTION_MS } from '../command.ts';
import { notFound } from '../errors.ts';
import type { Deps } from '../ports.ts';

/**
 * GET /v3/commands/{cid}: null while the command waits or runs; then its CommandResultEvent or CommandErrorEvent.
 * Another account's `_cid`, an unknown one, and a result older than 24 h are not found.
 */
export async function pollCommandResult(
  deps: Pick<Deps, 'commands' | 'clock'>,
  principal: Principal,
  cid: string,
): Promise<Record<string, unknown> | null> {
  const state = await deps.commands.result(principal.accountId, cid);
  if (!state) throw notFound('A command with this _cid');
  if (state.status === 'accepted') return null;
  if (deps.clock.now().getTime() - state.finishedAt.getTime() >= RESULT_RETENTION_MS)
    throw notFound('A command with this _cid');
  return state.result;
}
