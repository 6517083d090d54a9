import type { ClaimedCommand, StoredCommand } from '../../domain/command.ts';
import type { CommandLog, CommandQueue, CommandState, FinishedCommand } from '../../domain/ports.ts';
import { copy, Table } from './table.ts';

interface CommandRow extends StoredCommand {
  result: Record<string, unknown> | null;
  finishedAt: Date | null;
  createdAt: Date;
  seq: number;
  attempts: number;
  leaseUntil: Date | null;
  claimToken: string | null;
  queued: boolean;
}

/** No concurrency here: a claim of a held `_cid` answers the holder at once. */
export class InMemoryCommandLog implements CommandLog {
  readonly table = new Table<CommandRow>();
  private seq = 0;
  private take(command: Omit<StoredCommand, 'status'>, queued: boolean, at: Date) {
    const held = this.table.get(`${command.accountId}/${command.cid}`);
    if (held)
      return {
        accountId: held.accountId,
        cid: held.cid,
        type: held.type,
        body: held.body,
        status: held.status,
        answer: held.answer,
      };
    this.table.put(`${command.accountId}/${command.cid}`, {
      ...command,
      status: 'accepted',
      result: null,
      finishedAt: null,
      createdAt: at,
      seq: ++this.seq,
      attempts: 0,
      leaseUntil: null,
      claimToken: null,
      queued,
    });
    return null;
  }
  async claim(command: Omit<StoredCommand, 'status' | 'answer'>, at: Date) {
    return this.take({ ...command, answer: null }, false, at);
  }
  async accept(command: Omit<StoredCommand, 'status'>, at: Date) {
    return this.take(command, true, at);
  }
  async finish(accountId: string, cid: string, outcome: FinishedCommand, at: Date) {
    const held = this.table.get(`${accountId}/${cid}`)!;
    this.table.put(`${accountId}/${cid}`, {
      ...held,
      status: outcome.status,
      result: outcome.result,
      answer: outcome.answer === undefined ? held.answer : outcome.answer,
      finishedAt: at,
      leaseUntil: null,
      claimToken: null,
    });
  }
  async result(accountId: string, cid: string): Promise<CommandState | null> {
    const held = this.table.get(`${accountId}/${cid}`);
    if (!held) return null;
    return held.status === 'accepted'
      ? { status: 'accepted' }
      : { status: held.status, result: held.result!, finishedAt: held.finishedAt! };
  }
}

export class InMemoryCommandQueue implements CommandQueue {
  private tokens = 0;
  constructor(private readonly log: InMemoryCommandLog) {}
  private rows() {
    return [...this.log.table.rows.values()].map(copy);
  }
  async claimDue(limit: number, now: Date, leaseUntil: Date): Promise<ClaimedCommand[]> {
    const due = this.rows()
      .filter((c) => c.queued && c.status === 'accepted' && (!c.leaseUntil || c.leaseUntil.getTime() <= now.getTime()))
      .sort((a, b) => a.seq - b.seq)
      .slice(0, limit);
    return due.map((c) => {
      const claimed = { ...c, attempts: c.attempts + 1, leaseUntil, claimToken: `claim-${++this.tokens}` };
      this.log.table.put(`${c.accountId}/${c.cid}`, claimed);
      return {
        accountId: c.accountId,
        cid: c.cid,
        body: c.body,
        attempts: claimed.attempts,
        claimToken: claimed.claimToken,
      };
    });
  }
  async finishClaimed(command: ClaimedCommand, outcome: FinishedCommand, at: Date) {
    const held = this.log.table.get(`${command.accountId}/${command.cid}`);
    if (held?.status !== 'accepted' || held.claimToken !== command.claimToken) return false;
    await this.log.finish(command.accountId, command.cid, outcome, at);
    return true;
  }
  async release(command: ClaimedCommand, notBefore: Date, attemptUsed: boolean) {
    const held = this.log.table.get(`${command.accountId}/${command.cid}`)!;
    if (held.claimToken === command.claimToken)
      this.log.table.put(`${command.accountId}/${command.cid}`, {
        ...held,
        leaseUntil: notBefore,
        claimToken: null,
        attempts: held.attempts - (attemptUsed ? 0 : 1),
      });
  }
  async purgeFinished(before: Date, limit: number) {
    const old = this.rows()
      .filter((c) => c.finishedAt && c.finishedAt.getTime() <= before.getTime())
      .slice(0, limit);
    for (const c of old) this.log.table.rows.delete(`${c.accountId}/${c.cid}`);
    return old.length;
  }
}
