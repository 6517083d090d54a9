import type { Principal } from '../auth.ts';
import { type BrandCommand, type BrandCommandType, canonicalForm, replayOf } from '../command.ts';
import type { Deps } from '../ports.ts';

export interface AcceptedAnswer {
  _cid: string;
  _type: BrandCommandType;
  status: 'accepted';
}

/**
 * POST /v3/commands: stores a valid brand command for the executor and answers at once. The `_cid` is the sender's
 * idempotency key: the same command again gets the first answer and runs nothing (even after it failed); another
 * command under a taken `_cid` is a conflict.
 */
export async function acceptCommand(
  deps: Pick<Deps, 'commands' | 'clock'>,
  principal: Principal,
  command: BrandCommand,
): Promise<AcceptedAnswer> {
  const body = canonicalForm(command);
  const answer: AcceptedAnswer = { _cid: command._cid, _type: command._type, status: 'accepted' };
  const held = await deps.commands.accept(
    { accountId: principal.accountId, cid: command._cid, type: command._type, body, answer },
    deps.clock.now(),
  );
  return held ? replayOf<AcceptedAnswer>(held, command._type, body) : answer;
}
