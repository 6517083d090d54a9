import type { ClaimedCommand, StoredCommand } from '../command.ts';

// The command log: a sender's commands held by `_cid`, and the executor's queue of accepted ones.

export interface CommandLog {
  /**
   * Takes the account's `_cid` for this command in the current unit of work, or answers the command that holds
   * it. A concurrent claim of the same `_cid` waits for the first one's unit of work: if that commits, it gets
   * the stored command; if that rolls back, it takes the `_cid` itself.
   */
  claim(command: Omit<StoredCommand, 'status' | 'answer'>, at: Date): Promise<StoredCommand | null>;
  /** As `claim`, for a command that runs later: it is stored `accepted` with its answer, and the executor is woken. */
  accept(command: Omit<StoredCommand, 'status'>, at: Date): Promise<StoredCommand | null>;
  /** Records how a command held in the current unit of work ended: its status, and the event that tells it. */
  finish(accountId: string, cid: string, outcome: FinishedCommand, at: Date): Promise<void>;
  /** The command's state as its sender may poll it; null when there is none. */
  result(accountId: string, cid: string): Promise<CommandState | null>;
}

export interface FinishedCommand {
  status: 'succeeded' | 'failed';
  /** The CommandResultEvent or CommandErrorEvent payload, as it was stored in the outbox. */
  result: Record<string, unknown>;
  /** The answer a replay gets (partner commands, which answer when they run); absent keeps the stored one. */
  answer?: unknown;
}

export type CommandState =
  | { status: 'accepted' }
  | { status: 'succeeded' | 'failed'; result: Record<string, unknown>; finishedAt: Date };

/** The executor's side of the command log: accepted commands, claimed under a lease so that each runs once. */
export interface CommandQueue {
  /**
   * Claims up to `limit` accepted commands that nobody holds (never claimed, or whose lease ran out before `now`),
   * oldest first, each until `leaseUntil`. Claims by concurrent executors never overlap.
   */
  claimDue(limit: number, now: Date, leaseUntil: Date): Promise<ClaimedCommand[]>;
  /**
   * Records how a claimed command ended (as `CommandLog.finish`), when the claim is still this one's; false, with
   * nothing changed, when the claim is lost (its lease ran out and another executor took the command over, or
   * finished it). The row stays locked until the unit of work ends.
   */
  finishClaimed(command: ClaimedCommand, outcome: FinishedCommand, at: Date): Promise<boolean>;
  /**
   * Gives a claimed command back after an unexpected failure, to be claimed again no earlier than `notBefore`. With
   * `attemptUsed` false the claim gives its attempt back too (the failure was the moment's, not the command's).
   */
  release(command: ClaimedCommand, notBefore: Date, attemptUsed: boolean): Promise<void>;
  /** Deletes up to `limit` commands that finished at or before `before`; answers how many. */
  purgeFinished(before: Date, limit: number): Promise<number>;
}
