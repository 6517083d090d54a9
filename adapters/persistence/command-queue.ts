import type { EntityManager } from '@mikro-orm/postgresql';
import type { ClaimedCommand } from '../../domain/command.ts';
import type { CommandQueue } from '../../domain/ports.ts';
import { json } from './command-log.ts';

/**
 * Accepted commands, claimed with FOR UPDATE SKIP LOCKED under a lease: concurrent executors take disjoint
 * commands, and a command whose executor died is taken up again once its lease has run out. Each claim gets a
 * token of its own, so that an executor that outlived its lease cannot finish a command someone else took over.
 */
export class MikroOrmCommandQueue implements CommandQueue {
  constructor(private readonly em: EntityManager) {}

  async claimDue(limit: number, now: Date, leaseUntil: Date): Promise<ClaimedCommand[]> {
    const rows = await this.em.execute<{ account_id: string; cid: string; body: unknown; attempts: number; claim_token: string; seq: string }[]>(
      `update commands c set lease_until = ?, claim_token = gen_random_uuid(), attempts = c.attempts + 1
       from (select account_id, cid from commands
             where status = 'accepted' and (lease_until is null or lease_until <= ?)
             order by seq limit ? for update skip locked) due
       where c.account_id = due.account_id and c.cid = due.cid
       returning c.account_id, c.cid, c.body, c.attempts, c.claim_token, c.seq`,
      [leaseUntil, now, limit],
    );
    return rows
      .sort((a, b) => Number(a.seq) - Number(b.seq))
      .map((r) => ({ accountId: r.account_id, cid: r.cid, body: json(r.body), attempts: r.attempts, claimToken: r.claim_token }));
  }

  async lockClaimed(command: ClaimedCommand): Promise<boolean> {
    const rows = await this.em.execute(
      `select 1 from commands where account_id = ? and cid = ? and status = 'accepted' and claim_token = ? for update`,
      [command.accountId, command.cid, command.claimToken],
    );
    return rows.length > 0;
  }

  async release(command: ClaimedCommand, notBefore: Date): Promise<void> {
    await this.em.execute(
      `update commands set lease_until = ?, claim_token = null where account_id = ? and cid = ? and claim_token = ?`,
      [notBefore, command.accountId, command.cid, command.claimToken],
    );
  }

  async purgeFinished(before: Date, limit: number): Promise<number> {
    const rows = await this.em.execute(
      `delete from commands where ctid in (
         select ctid from commands where finished_at is not null and finished_at <= ? limit ? for update skip locked)
       returning 1`,
      [before, limit],
    );
    return rows.length;
  }
}
