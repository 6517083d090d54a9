import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { StreamSlot, StreamSlots } from '../domain/ports.ts';

/**
 * Stream slots in PostgreSQL (table `stream_slots`), shared by every process on the server. A slot is taken by
 * inserting its row, or by taking over one whose lease ran out (its holder died); the holder renews the lease while
 * it streams and deletes the row when done. Each statement commits on its own: nothing is held across the stream.
 */
export class PostgresStreamSlots implements StreamSlots {
  constructor(
    private readonly orm: MikroORM,
    private readonly perAccount: number,
    private readonly leaseMs = 30_000,
  ) {}

  private execute(sql: string, params: unknown[]) {
    return this.orm.em.fork().getConnection().execute<{ slot: number }[]>(sql, params);
  }

  async take(accountId: string): Promise<StreamSlot | null> {
    const holder = randomUUID();
    for (let slot = 0; slot < this.perAccount; slot++) {
      const taken = await this.execute(
        `insert into stream_slots (account_id, slot, holder, lease_until) values (?, ?, ?, now() + ? * interval '1 millisecond')
         on conflict (account_id, slot) do update set holder = excluded.holder, lease_until = excluded.lease_until
           where stream_slots.lease_until < now()
         returning slot`,
        [accountId, slot, holder, this.leaseMs],
      );
      if (taken.length === 0) continue;
      const renew = setInterval(() => {
        this.execute(
          `update stream_slots set lease_until = now() + ? * interval '1 millisecond' where account_id = ? and slot = ? and holder = ?`,
          [this.leaseMs, accountId, slot, holder],
        ).catch(() => {
          /* the next renewal tries again; the lease is three of these long */
        });
      }, this.leaseMs / 3);
      renew.unref();
      let released = false;
      return {
        release: async () => {
          if (released) return;
          released = true;
          clearInterval(renew);
          await this.execute('delete from stream_slots where account_id = ? and slot = ? and holder = ?', [
            accountId,
            slot,
            holder,
          ]);
        },
      };
    }
    return null;
  }
}

/** Stream slots in this process: right for the embedded database, which serves one process. */
export class InMemoryStreamSlots implements StreamSlots {
  private readonly held = new Map<string, number>();
  constructor(private readonly perAccount: number) {}

  async take(accountId: string): Promise<StreamSlot | null> {
    const count = this.held.get(accountId) ?? 0;
    if (count >= this.perAccount) return null;
    this.held.set(accountId, count + 1);
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        const left = (this.held.get(accountId) ?? 1) - 1;
        if (left > 0) this.held.set(accountId, left);
        else this.held.delete(accountId);
      },
    };
  }
}
