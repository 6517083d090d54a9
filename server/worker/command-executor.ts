import { type Span, SpanStatusCode } from '@opentelemetry/api';
import { type ClaimedCommand, CommandError } from '../../domain/command.ts';
import { claimDueCommands } from '../../domain/use-cases/claim-due-commands.ts';
import {
  type Execution,
  type ExecutionPolicy,
  executeCommands,
  type RunInUnit,
} from '../../domain/use-cases/execute-command.ts';
import { purgeCommandResults } from '../../domain/use-cases/purge-command-results.ts';
import { failureLevel, type Logger } from '../logger.ts';
import type { Services } from '../services.ts';
import { laneTrace } from './spans.ts';
import type { WorkerTask } from './worker.ts';

export interface ExecutorOptions extends ExecutionPolicy {
  /** Commands a lane claims at a time. */
  batch: number;
  /** Lanes: commands executed at once, each in a unit of work of its own. */
  concurrency: number;
  /** How long a claim holds; a command whose executor died is taken up again after it. */
  leaseMs: number;
}

/**
 * Runs accepted brand commands in lanes: a lane claims a few (one statement), executes them in one unit of work (each
 * in one of its own if any fails), and claims again while it finds a full batch. A full batch means a backlog, and
 * starts another lane (up to `concurrency`), so that lanes keep the database busy while others wait on it. A short
 * batch means the queue was empty when it was claimed: the lane ends, and whatever commits later wakes the executor
 * again. A trickle of commands so costs one claim each, not one per lane.
 */
export function commandExecutor(services: Services, options: ExecutorOptions): WorkerTask {
  const report = (command: ClaimedCommand, execution: Execution) => {
    services.metrics.commandsExecuted.inc({ outcome: execution.outcome.replace(' ', '_') });
    logOutcome(services.log, command, execution);
    if (execution.outcome === 'retry' || execution.outcome === 'gave up') {
      services.log[failureLevel(execution.error)](
        { err: execution.error, cid: command.cid, account: command.accountId, attempt: command.attempts },
        execution.outcome === 'retry'
          ? 'command failed unexpectedly; it will be tried again'
          : 'command failed unexpectedly, on its last attempt or in recording its error: INTERNAL_ERROR',
      );
    }
  };
  return {
    name: 'command executor',
    wakeOn: 'commands',
    idleDelayMs: 1000,
    async runOnce({ stopping }) {
      const lanes: Promise<void>[] = [];
      // Each lane's failure (a database gone) is caught as the lane starts, not when it is awaited: a rejection left
      // unobserved meanwhile would end the process.
      const failures: unknown[] = [];
      const start = () =>
        lanes.push(
          lane().catch((error: unknown) => {
            failures.push(error);
          }),
        );
      const lane = async () => {
        const trace = laneTrace();
        const transact: RunInUnit = (work) => services.unitOfWork(trace.current).transaction(work);
        while (!stopping()) {
          const claimed = await services
            .unitOfWork()
            .statements((deps) => claimDueCommands(deps, options.batch, options.leaseMs));
          const backlog = claimed.length === options.batch;
          if (backlog && lanes.length < options.concurrency) start();
          await executeCommands(transact, claimed, options, {
            executed: report,
            // A command's own failure (an unknown order, say) is expected and recorded below; anything else is worth a
            // line.
            around: (command, work) => trace.around(command.trace, `command ${typeOf(command)}`, work, settleExecution),
            batchUndone: (err) => {
              if (!(err instanceof CommandError))
                services.log.warn(
                  { err, commands: claimed.length },
                  'a batch of commands was undone; they run one by one',
                );
            },
          });
          if (!backlog) return;
        }
      };
      start();
      // Lanes start lanes while they run: wait for every one, including those started meanwhile.
      for (let i = 0; i < lanes.length; i++) await lanes[i];
      if (failures.length > 0) throw failures[0];
      return false;
    },
  };
}

/**
 * A command's span: its outcome when it ran alone (in a batch, its work's end says it succeeded there), failed when it
 * failed unexpectedly (tried again, or given up).
 */
const settleExecution = (span: Span, answer: unknown) => {
  const outcome = (answer as Execution | undefined)?.outcome;
  if (outcome) span.setAttribute('command.outcome', outcome);
  if (outcome === 'retry' || outcome === 'gave up') span.setStatus({ code: SpanStatusCode.ERROR });
};

/** The command's `_type`: one of the types its acceptance allowed. */
const typeOf = (command: ClaimedCommand) => String((command.body as { _type?: unknown } | null)?._type);

/** One line per brand command finished: its `_cid`, account, type and outcome (never its body). */
function logOutcome(log: Logger, command: ClaimedCommand, execution: Execution) {
  if (execution.outcome === 'retry' || execution.outcome === 'lost') return; // not finished here: said below, or by the claim's new holder
  const code =
    execution.outcome === 'failed' ? execution.code : execution.outcome === 'gave up' ? 'INTERNAL_ERROR' : undefined;
  const type = typeOf(command);
  // The `_cid` is the sender's text: in the fields, never in the message (a line break in it would forge a line).
  log.info(
    {
      _cid: command.cid,
      account: command.accountId,
      type,
      outcome: code ? 'failed' : 'succeeded',
      ...(code && { code }),
      attempt: command.attempts,
    },
    code ? `brand command failed: ${code}` : 'brand command succeeded',
  );
}

/** Deletes command results past their 24 h, a batch at a time, on the service's clock. */
export function commandResultPurge(services: Services, batch = 500): WorkerTask {
  return {
    name: 'command result purge',
    idleDelayMs: 2000,
    async runOnce() {
      return (await services.unitOfWork().transaction((deps) => purgeCommandResults(deps, batch))) === batch;
    },
  };
}
