import type { MikroORM } from '@mikro-orm/postgresql';

export interface QueueStats {
  commands: { accepted: number; running: number; finished: number; oldestAcceptedAgeSeconds: number };
  deliveries: { pending: number; oldestPendingAgeSeconds: number };
}

export interface PoolStats {
  used: number;
  free: number;
  pending: number;
  max: number;
}

// One statement, each count on a partial index; ages on the database's clock. The same for every process: the queues
// are shared.
const QUEUES = `
  select
    (select count(*) from commands where status = 'accepted')::int as accepted,
    (select count(*) from commands where status = 'running')::int as running,
    (select count(*) from commands where finished_at is not null)::int as finished,
    coalesce((select extract(epoch from now() - min(created_at)) from commands where status = 'accepted'), 0)::float8 as oldest_accepted,
    (select count(*) from deliveries where status = 'pending')::int as pending,
    coalesce((select extract(epoch from now() - min(next_attempt_at)) from deliveries where status = 'pending' and next_attempt_at <= now()), 0)::float8 as oldest_pending`;

/** What an operator watches of the queues and of this process's connection pool (`GET /metrics`). */
export function operationalStats(orm: MikroORM) {
  return {
    async queues(): Promise<QueueStats> {
      const [row] = await orm.em.fork().getConnection().execute<{
        accepted: number; running: number; finished: number; oldest_accepted: number; pending: number; oldest_pending: number;
      }[]>(QUEUES);
      return {
        commands: { accepted: row!.accepted, running: row!.running, finished: row!.finished, oldestAcceptedAgeSeconds: row!.oldest_accepted },
        deliveries: { pending: row!.pending, oldestPendingAgeSeconds: Math.max(0, row!.oldest_pending) },
      };
    },
    pool(): PoolStats {
      const pool = (orm.em.getKnex().client as { pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number; max: number } }).pool;
      return pool ? { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires(), max: pool.max } : { used: 0, free: 0, pending: 0, max: 0 };
    },
  };
}

export type OperationalStats = ReturnType<typeof operationalStats>;
