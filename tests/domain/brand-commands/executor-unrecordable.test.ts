import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { BrandCommand } from '../../../domain/command.ts';
import { DomainError } from '../../../domain/errors.ts';
import type { OutboxEvent } from '../../../domain/event.ts';
import { acceptCommand } from '../../../domain/use-cases/accept-command.ts';
import { claimDueCommands } from '../../../domain/use-cases/claim-due-commands.ts';
import { executeCommand, type RunInUnit } from '../../../domain/use-cases/execute-command.ts';
import { pollCommandResult } from '../../../domain/use-cases/poll-command-result.ts';
import { fakeDeps } from '../../fakes.ts';
import { envelope, world } from './support.ts';

// A command's error that the store refuses to keep (any failure but the database's absence) would be refused again at
// every attempt: the command would be claimed again after each lease, forever. It ends with the plainest error instead.
const test = suite('brand commands on the pure domain: an error that cannot be recorded');

test('a CommandError the store refuses ends the command as INTERNAL_ERROR, once, instead of forever', async () => {
  const deps = fakeDeps();
  const { brand } = await world(deps);
  const stored = deps.events;
  const events = Object.create(stored) as typeof stored;
  // A store that refuses this command's error event, as it refuses one too large to keep.
  events.add = async (added: readonly OutboxEvent[]) => {
    if (added.some((e) => e.type === 'CommandErrorEvent' && e.payload.code !== 'INTERNAL_ERROR'))
      throw new DomainError('VALIDATION_FAILED', 'The event would be too large.');
    return stored.add(added);
  };
  const refusing: RunInUnit = (work) => work({ ...deps, events });
  const principal = { accountId: brand.id, contactId: 'c', role: 'brand' as const };
  await acceptCommand(deps, principal, { ...envelope('RefreshOrder', 'u-1'), orderId: 'missing' } as BrandCommand);
  const [claimed] = await claimDueCommands(deps, 10, 60_000);

  const execution = await executeCommand(refusing, claimed!, { maxAttempts: 3, retryDelayMs: 1000 });
  assert.is(execution.outcome, 'gave up');
  const result = await pollCommandResult(deps, principal, 'u-1');
  assert.equal([result?._type, result?.code], ['CommandErrorEvent', 'INTERNAL_ERROR']);
  assert.equal(await claimDueCommands(deps, 10, 60_000), [], 'finished: never claimed again');
});

test.run();
