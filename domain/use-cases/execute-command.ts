import { type BrandCommandDeps, runBrandCommand } from '../brand-commands.ts';
import { type BrandCommand, type ClaimedCommand, CommandError, type CommandOutcome } from '../command.ts';
import { emitCommandOutcome } from '../command-events.ts';
import { DomainError, isUnavailable } from '../errors.ts';
import type { Deps } from '../ports.ts';
import { receiverOf } from '../receivers.ts';

/**
 * Runs work in a new unit of work, in one transaction: it commits whole, or not at all. The one use case handed one is
 * the executor's (docs/architecture.md): on a failure it runs again in units of its own, which only it can choose.
 */
export type RunInUnit = <T>(work: (deps: Deps) => Promise<T>) => Promise<T>;

export interface ExecutionPolicy {
  /** Executions an unexpected failure may take before the command ends as INTERNAL_ERROR. */
  maxAttempts: number;
  /** How long a command waits after an unexpected failure before it is tried again. */
  retryDelayMs: number;
}

export type Execution =
  | { outcome: 'succeeded' | 'lost' }
  | { outcome: 'failed'; code: CommandError['code'] }
  | { outcome: 'retry' | 'gave up'; error: unknown };

/**
 * The claim was taken over (its lease ran out) or the command finished elsewhere: what this unit of work did is undone.
 */
class ClaimLost extends Error {}

/**
 * The executor's story for one claimed command. In one unit of work: run it, store its CommandResultEvent and mark
 * it succeeded if the claim is still ours, so that its effects, its result and its events commit together (a lost
 * claim rolls all of it back: the fence is the last statement, which saves a round trip on every command). A failure
 * the sender can act on (CommandError) rolls that back and is stored, in a unit of work of its own, as a
 * CommandErrorEvent (one the store refuses ends as INTERNAL_ERROR). An unexpected failure gives the command back to be
 * tried again later, until the last attempt, after which it ends as INTERNAL_ERROR, without the failure's text.
 */
export async function executeCommand(
  transact: RunInUnit,
  claimed: ClaimedCommand,
  policy: ExecutionPolicy,
): Promise<Execution> {
  const command = claimed.body as BrandCommand;
  try {
    await transact(async (deps) => {
      const result = await runBrandCommand(deps, claimed.accountId, command);
      await finish(deps, claimed, command, { status: 'succeeded', result });
    });
    return { outcome: 'succeeded' };
  } catch (error) {
    if (error instanceof ClaimLost) return { outcome: 'lost' };
    if (error instanceof CommandError) return record(transact, claimed, command, error);
    // A rule of the core the command broke (an order too large for its event): the sender's to correct, as a
    // CommandError.
    if (error instanceof DomainError && error.code === 'VALIDATION_FAILED') {
      return record(
        transact,
        claimed,
        command,
        new CommandError(
          'VALIDATION_FAILED',
          error.message,
          error.issues.map((i) => ({ key: i.path, message: i.message })),
        ),
      );
    }
    // The database away (or a transaction it undid) is nobody's fault but the moment's: the command waits for it,
    // never ends for it, and gets its attempt back.
    const moment = isUnavailable(error);
    if (claimed.attempts < policy.maxAttempts || moment) {
      await transact(async (deps) =>
        deps.commandQueue.release(claimed, new Date(deps.clock.now().getTime() + policy.retryDelayMs), !moment),
      );
      return { outcome: 'retry', error };
    }
    await record(transact, claimed, command, internalError());
    return { outcome: 'gave up', error };
  }
}

const internalError = () =>
  new CommandError('INTERNAL_ERROR', 'The command could not be executed because of an internal error.');

/**
 * Runs a claimed batch in one unit of work when every command of it succeeds: one transaction and one write of the
 * events for the batch, instead of one of each per command (the round trips are most of a command's cost). Effects,
 * results and events still commit together, for the whole batch at once. If a command of the batch fails in any way,
 * nothing of the batch is committed: that command runs on its own (`executeCommand`), so that its failure is
 * recorded, retried or fenced exactly as when it runs alone, and the commands before and after it run again as
 * batches of their own, in acceptance order. A failure no command explains (the lock, the commit) runs each on its own.
 */
export async function executeCommands(
  transact: RunInUnit,
  batch: readonly ClaimedCommand[],
  policy: ExecutionPolicy,
  hooks: BatchHooks = {},
): Promise<Execution[]> {
  const executions: Execution[] = [];
  const done = (claimed: ClaimedCommand, execution: Execution) => {
    executions.push(execution);
    hooks.executed?.(claimed, execution);
  };
  const around = hooks.around ?? ((_claimed, work) => work());
  const alone = async (claimed: ClaimedCommand) =>
    done(claimed, await around(claimed, () => executeCommand(transact, claimed, policy)));
  const run = async (commands: readonly ClaimedCommand[]): Promise<void> => {
    if (commands.length <= 1) return commands[0] && alone(commands[0]);
    let failing: number | undefined;
    try {
      await transact(async (deps) => {
        await deps.jobs.lockForChange(await ordersOf(deps, commands));
        for (const [i, claimed] of commands.entries()) {
          failing = i;
          const command = claimed.body as BrandCommand;
          await around(claimed, async () =>
            finish(deps, claimed, command, {
              status: 'succeeded',
              result: await runBrandCommand(deps, claimed.accountId, command),
            }),
          );
        }
        failing = undefined;
      });
    } catch (error) {
      // Undone whole; said, because an error the commands do not explain (a deadlock between two batches, a lost
      // connection) is seen only here.
      hooks.batchUndone?.(error);
      if (failing === undefined) {
        for (const claimed of commands) await alone(claimed);
        return;
      }
      await run(commands.slice(0, failing));
      await alone(commands[failing]!);
      return run(commands.slice(failing + 1));
    }
    for (const claimed of commands) done(claimed, { outcome: 'succeeded' });
  };
  await run(batch);
  return executions;
}

/**
 * Every order the batch changes, for its unit of work to lock first. Lanes run batches at once, claimed in acceptance
 * order, so two of them hold commands of the same orders; taking the rows as each command comes, each batch could wait
 * for the other until the server ends one (a deadlock, after its `deadlock_timeout`). Locked all at once, in one order
 * (`lockForChange`), they are taken as partner commands take several, and the commands still run in acceptance order.
 * A RefreshInvoice names its invoice: its order is looked up here.
 */
async function ordersOf(deps: Pick<Deps, 'invoices'>, batch: readonly ClaimedCommand[]): Promise<string[]> {
  const orders = new Set<string>();
  for (const { body } of batch) {
    const command = body as BrandCommand;
    if ('orderId' in command && typeof command.orderId === 'string') orders.add(command.orderId);
    if (command._type === 'RefreshInvoice') {
      const invoice = await deps.invoices.get(command.invoiceId);
      if (invoice) orders.add(invoice.orderId);
    }
  }
  return [...orders];
}

export interface BatchHooks {
  /** Each command's execution as soon as it is known (one that failed to be recorded throws, after the others). */
  executed?(claimed: ClaimedCommand, execution: Execution): void;
  /** The batch's unit of work was undone, by this error: its commands run one by one next. */
  batchUndone?(error: unknown): void;
  /** Runs one command's own work (in a batch, or alone), within what the caller keeps for it: its trace. */
  around?<T>(claimed: ClaimedCommand, work: () => Promise<T>): Promise<T>;
}

async function record(
  transact: RunInUnit,
  claimed: ClaimedCommand,
  command: BrandCommand,
  error: CommandError,
): Promise<Execution> {
  try {
    await transact((deps) => finish(deps, claimed, command, { status: 'failed', error }));
    return { outcome: 'failed', code: error.code };
  } catch (failure) {
    if (failure instanceof ClaimLost) return { outcome: 'lost' };
    if (isUnavailable(failure) || error.code === 'INTERNAL_ERROR') throw failure;
    // An error the store refuses to keep would be refused at every attempt, and the command claimed again after each
    // lease, forever: it ends with the plainest error instead.
    const plain = await record(transact, claimed, command, internalError());
    return plain.outcome === 'failed' ? { outcome: 'gave up', error: failure } : plain;
  }
}

async function finish(
  deps: BrandCommandDeps & Pick<Deps, 'commandQueue'>,
  claimed: ClaimedCommand,
  command: BrandCommand,
  outcome: CommandOutcome,
) {
  const sender = await receiverOf(deps, claimed.accountId, 'brand');
  const result = await emitCommandOutcome(deps, sender, command, outcome);
  if (!(await deps.commandQueue.finishClaimed(claimed, { status: outcome.status, result }, deps.clock.now())))
    throw new ClaimLost();
}
