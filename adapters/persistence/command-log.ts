import type { EntityManager } from '@mikro-orm/postgresql';
import type { StoredCommand } from '../../domain/command.ts';
import type { CommandLog, CommandState, FinishedCommand } from '../../domain/ports.ts';
import type { CurrentTrace } from '../../domain/trace.ts';
import { withDriverConnection } from './driver.ts';
import { isStoredId } from './stored-ids.ts';
import type { WorkNotices } from './wake-ups/notices.ts';

// jsonb arrives parsed from the driver, or as text where the ORM's setup keeps it raw.
export const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);

type HeldRow = { type: string; body: unknown; status: StoredCommand['status'] | 'running'; answer: unknown };

/**
 * `_cid`s per account: INSERT … ON CONFLICT DO NOTHING takes one, and waits for a concurrent holder to finish.
 * A partner command is `running` while its unit of work runs it; a brand command waits `accepted` for the executor.
 */
export class MikroOrmCommandLog implements CommandLog {
  constructor(
    private readonly em: EntityManager,
    private readonly notices: WorkNotices,
    private readonly trace: CurrentTrace,
  ) {}

  claim(command: Omit<StoredCommand, 'status' | 'answer'>, at: Date): Promise<StoredCommand | null> {
    return this.take({ ...command, answer: null }, 'running', at);
  }

  /** One statement takes the `_cid`, so that the command is whole even without a transaction. */
  async accept(command: Omit<StoredCommand, 'status'>, at: Date): Promise<StoredCommand | null> {
    const held = await this.take(command, 'accepted', at);
    if (!held) this.notices.created('commands');
    return held;
  }

  private async take(
    command: Omit<StoredCommand, 'status'>,
    status: 'running' | 'accepted',
    at: Date,
  ): Promise<StoredCommand | null> {
    // On the driver, prepared: accepting a command is the hot write path.
    const { rowCount } = await withDriverConnection(this.em, (client) =>
      client.query({
        name: 'command-take',
        text: `insert into commands (account_id, cid, type, body, status, answer, created_at, updated_at, traceparent)
       values ($1, $2, $3, $4::jsonb, $5, $6::json, $7, $7, $8) on conflict (account_id, cid) do nothing`,
        values: [
          command.accountId,
          command.cid,
          command.type,
          JSON.stringify(command.body),
          status,
          JSON.stringify(command.answer),
          at,
          // The request's: the executor, in another process maybe, continues its trace.
          this.trace(),
        ],
      }),
    );
    if (rowCount === 1) return null;
    const [row] = await this.em.execute<HeldRow[]>(
      'select type, body, status, answer from commands where account_id = ? and cid = ?',
      [command.accountId, command.cid],
    );
    const heldStatus = row!.status === 'running' ? 'accepted' : row!.status;
    return {
      accountId: command.accountId,
      cid: command.cid,
      type: row!.type,
      body: json(row!.body),
      status: heldStatus,
      answer: json(row!.answer),
    };
  }

  async finish(accountId: string, cid: string, outcome: FinishedCommand, at: Date): Promise<void> {
    await this.em.execute(
      `update commands set status = ?, result = ?::json, answer = coalesce(?::json, answer), finished_at = ?, updated_at = ?,
         lease_until = null, claim_token = null
       where account_id = ? and cid = ?`,
      [
        outcome.status,
        JSON.stringify(outcome.result),
        outcome.answer === undefined ? null : JSON.stringify(outcome.answer),
        at,
        at,
        accountId,
        cid,
      ],
    );
  }

  async result(accountId: string, cid: string): Promise<CommandState | null> {
    if (!isStoredId(accountId)) return null;
    const [row] = await this.em.execute<{ status: string; result: unknown; finished_at: string | null }[]>(
      'select status, result, finished_at from commands where account_id = ? and cid = ?',
      [accountId, cid],
    );
    if (!row) return null;
    if (row.status !== 'succeeded' && row.status !== 'failed') return { status: 'accepted' };
    return { status: row.status, result: json(row.result), finishedAt: new Date(row.finished_at!) };
  }
}
