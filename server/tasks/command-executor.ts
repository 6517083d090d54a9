import { claimDueCommands } from '../../domain/use-cases/claim-due-commands.ts';
import { executeCommand, type ExecutionPolicy } from '../../domain/use-cases/execute-command.ts';
import { purgeCommandResults } from '../../domain/use-cases/purge-command-results.ts';
import type { Services } from '../services.ts';
import type { WorkerTask } from '../worker.ts';

export interface ExecutorOptions extends ExecutionPolicy {
  /** Commands a lane claims at a time. */
  batch: number;
  /** Lanes: commands executed at once, each in a unit of work of its own. */
  concurrency: number;
  /** How long a claim holds; a command whose executor died is taken up again after it. */
  leaseMs: number;
}

/**
 * Runs accepted brand commands in lanes: each lane claims a few (one statement), executes them one by one, and
 * claims again until nothing is left; a round ends when every lane found the queue empty. Lanes keep the database
 * busy while others wait on it, and a claim holds only what one lane will run next.
 */
export function commandExecutor(services: Services, options: ExecutorOptions): WorkerTask {
  const lane = async (stopping: () => boolean) => {
    while (!stopping()) {
      const claimed = await services.autocommit((deps) => claimDueCommands(deps, options.batch, options.leaseMs));
      if (claimed.length === 0) return;
      for (const command of claimed) {
        const execution = await executeCommand(services.transact, command, options);
        if (execution.outcome === 'retry' || execution.outcome === 'gave up') {
          services.log.error({ err: execution.error, cid: command.cid, account: command.accountId, attempt: command.attempts },
            execution.outcome === 'retry' ? 'command failed unexpectedly; it will be tried again' : 'command failed unexpectedly on its last attempt: INTERNAL_ERROR');
        }
      }
    }
  };
  return {
    name: 'command executor',
    wakeOn: 'commands',
    idleDelayMs: 1000,
    async runOnce({ stopping }) {
      await Promise.all(Array.from({ length: options.concurrency }, () => lane(stopping)));
      return false;
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
