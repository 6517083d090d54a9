import { claimDueCommands } from '../../domain/use-cases/claim-due-commands.ts';
import { executeCommand, type ExecutionPolicy } from '../../domain/use-cases/execute-command.ts';
import { purgeCommandResults } from '../../domain/use-cases/purge-command-results.ts';
import type { Services } from '../services.ts';
import type { WorkerTask } from '../worker.ts';
import { forEachLimited } from './limited.ts';

export interface ExecutorOptions extends ExecutionPolicy {
  /** Commands claimed per round. */
  batch: number;
  /** Commands executed at once (each in a unit of work of its own). */
  concurrency: number;
  /** How long a claim holds; a command whose executor died is taken up again after it. */
  leaseMs: number;
}

/** Runs accepted brand commands: claims a batch, executes each, and goes on while there is more. */
export function commandExecutor(services: Services, options: ExecutorOptions): WorkerTask {
  return {
    name: 'command executor',
    wakeOn: 'commands',
    idleDelayMs: 1000,
    async runOnce() {
      const claimed = await services.transact((deps) => claimDueCommands(deps, options.batch, options.leaseMs));
      await forEachLimited(claimed, options.concurrency, async (command) => {
        const execution = await executeCommand(services.transact, command, options);
        if (execution.outcome === 'retry' || execution.outcome === 'gave up') {
          services.log.error({ err: execution.error, cid: command.cid, account: command.accountId, attempt: command.attempts },
            execution.outcome === 'retry' ? 'command failed unexpectedly; it will be tried again' : 'command failed unexpectedly on its last attempt: INTERNAL_ERROR');
        }
      });
      return claimed.length === options.batch;
    },
  };
}

/** Deletes command results past their 24 h, a batch at a time, on the service's clock. */
export function commandResultPurge(services: Services, batch = 500): WorkerTask {
  return {
    name: 'command result purge',
    idleDelayMs: 2000,
    async runOnce() {
      return (await services.transact((deps) => purgeCommandResults(deps, batch))) === batch;
    },
  };
}
