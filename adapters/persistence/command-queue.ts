import type { EntityManager } from '@mikro-orm/postgresql';
import type { ClaimedCommand } from '../../domain/command.ts';
import type { CommandQueue, FinishedCommand } from '../../domain/ports.ts';
import { json } from './command-log.ts';
import { withDriverConnection } from './driver.ts';

/**
 * Accepted commands, claimed with FOR UPDATE SKIP LOCKED under a lease: concurrent executors take disjoint
 * commands, and a command whose executor died is taken up again once its lease has run out. Each claim gets a
 * token of its own, so that an executor that outlived its lease cannot finish a command someone else took over.
 * The executor's statements are prepared on the driver: they run for every command.
 */
export class MikroOrmCommandQueue implements CommandQueue {
  constructor(private readonly em: EntityManager) {}

  async claimDue(limit: number, now: Date, leaseUntil: Date): Promise<ClaimedCommand[]> {
    const { rows } = await withDriverConnection(this.em, (client) =>
      client.query<{
        account_id: string;
        cid: string;
        body: unknown;
        attempts: number;
        claim_token: string;
        seq: string;
        traceparent: string | null;
      }>({
        name: 'commands-claim-v2',
        text: `update commands c set lease_until = $1, claim_token = gen_random_uuid(), attempts = c.attempts + 1
       from (select account_id, cid from commands
             where status = 'accepted' and (lease_until is null or lease_until <= $2)
             order by seq limit $3 for update skip locked) due
       where c.account_id = due.account_id and c.cid = due.cid
       returning c.account_id, c.cid, c.body, c.attempts, c.claim_token, c.seq, c.traceparent`,
        values: [leaseUntil, now, limit],
      }),
    );
    return rows
      .sort((a, b) => Number(a.seq) - Number(b.seq))
      .map((r) => ({
        accountId: r.account_id,
        cid: r.cid,
        body: json(r.body),
        attempts: r.attempts,
        claimToken: r.claim_token,
        trace: r.traceparent,
      }));
  }

  async finishClaimed(command: ClaimedCommand, outcome: FinishedCommand, at: Date): Promise<boolean> {
    const { rowCount } = await withDriverConnection(this.em, (client) =>
      client.query({
        name: 'commands-finish-claimed',
        text: `update commands set status = $1, result = $2::json, finished_at = $3, updated_at = $3, lease_until = null, claim_token = null
       where account_id = $4 and cid = $5 and status = 'accepted' and claim_token = $6`,
        values: [
          outcome.status,
          JSON.stringify(outcome.result),
          at,
          command.accountId,
          command.cid,
          command.claimToken,
        ],
      }),
    );
    return rowCount === 1;
  }

  async release(command: ClaimedCommand, notBefore: Date, attemptUsed: boolean): Promise<void> {
    await withDriverConnection(this.em, (client) =>
      client.query({
        name: 'commands-release',
        text: 'update commands set lease_until = $1, claim_token = null, attempts = attempts - $5 where account_id = $2 and cid = $3 and claim_token = $4',
        values: [notBefore, command.accountId, command.cid, command.claimToken, attemptUsed ? 0 : 1],
      }),
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
