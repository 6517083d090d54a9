import type { EntityManager } from '@mikro-orm/postgresql';
import type { StoredCommand } from '../../domain/command.ts';
import type { CommandLog } from '../../domain/ports.ts';

// jsonb arrives parsed from the driver, or as text where the ORM's setup keeps it raw.
const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);

/** `_cid`s per account: INSERT … ON CONFLICT DO NOTHING takes one, and waits for a concurrent holder to finish. */
export class MikroOrmCommandLog implements CommandLog {
  constructor(private readonly em: EntityManager) {}

  async claim(command: Omit<StoredCommand, 'status' | 'answer'>, at: Date): Promise<StoredCommand | null> {
    const inserted = await this.em.execute<{ cid: string }[]>(
      `insert into commands (account_id, cid, type, body, status, answer, created_at, updated_at)
       values (?, ?, ?, ?::jsonb, 'accepted', null, ?, ?) on conflict (account_id, cid) do nothing returning cid`,
      [command.accountId, command.cid, command.type, JSON.stringify(command.body), at, at],
    );
    if (inserted.length > 0) return null;
    const [row] = await this.em.execute<{ type: string; body: unknown; status: StoredCommand['status']; answer: unknown }[]>(
      'select type, body, status, answer from commands where account_id = ? and cid = ?', [command.accountId, command.cid],
    );
    return { accountId: command.accountId, cid: command.cid, type: row!.type, body: json(row!.body), status: row!.status, answer: json(row!.answer) };
  }

  async complete(accountId: string, cid: string, status: StoredCommand['status'], answer: unknown, at: Date): Promise<void> {
    await this.em.execute('update commands set status = ?, answer = ?::jsonb, updated_at = ? where account_id = ? and cid = ?',
      [status, JSON.stringify(answer), at, accountId, cid]);
  }
}
