import type { MikroORM } from '@mikro-orm/postgresql';

export interface QueueStats {
  commands: { accepted: number; running: number; oldestAcceptedAgeSeconds: number };
  deliveries: { pending: number; oldestPendingAgeSeconds: number };
  endpoints: { failing: number; disabledFailing: number; disabledIntegrator: number };
}

export interface PoolStats {
  used: number;
  free: number;
  pending: number;
  max: number;
}

// One statement, each part on a partial index (migration 20261123060000) or the small queue of deliveries to send; ages
// on the database's clock, never below 0. The same for every process: the queues are shared. A running command is an
// accepted one an executor holds now (a partner command runs inside its request's transaction, which nobody else sees).
// Overdue counts only a delivery that could be sent: the first pending one of its order (the later ones wait for it, as
// the claim makes them), of an endpoint enabled with a URL (the others' wait as they are, CONTRACT §11).
const QUEUES = `
  select
    (select count(*) from commands where status = 'accepted' and (claim_token is null or lease_until <= now()))::int as accepted,
    (select count(*) from commands where status = 'accepted' and claim_token is not null and lease_until > now())::int as running,
    greatest(coalesce((select extract(epoch from now() - min(created_at)) from commands where status = 'accepted'), 0), 0)::float8 as oldest_accepted,
    (select count(*) from delivery_queue)::int as pending,
    greatest(coalesce((select extract(epoch from now() - min(q.next_attempt_at)) from delivery_queue q
      where q.next_attempt_at <= now() and not q.paused
        and not exists (select 1 from delivery_queue o where o.endpoint_id = q.endpoint_id and o.order_id = q.order_id
          and o.position < q.position)
        and not exists (select 1 from webhook_configs w where w.id = q.endpoint_id
          and not (w.enabled and coalesce(w.url, '') <> ''))), 0), 0)::float8 as oldest_pending,
    (select count(*) from webhook_configs where failing_since is not null and enabled)::int as failing,
    (select count(*) from webhook_configs where not enabled and disabled_reason = 'failing')::int as disabled_failing,
    (select count(*) from webhook_configs where not enabled and disabled_reason = 'integrator')::int as disabled_integrator`;

/** What an operator watches of the queues and of this process's connection pool (`GET /metrics`). */
export function operationalStats(orm: MikroORM) {
  return {
    async queues(): Promise<QueueStats> {
      const [row] = await orm.em.fork().getConnection().execute<
        {
          accepted: number;
          running: number;
          oldest_accepted: number;
          pending: number;
          oldest_pending: number;
          failing: number;
          disabled_failing: number;
          disabled_integrator: number;
        }[]
      >(QUEUES);
      return {
        commands: { accepted: row!.accepted, running: row!.running, oldestAcceptedAgeSeconds: row!.oldest_accepted },
        deliveries: { pending: row!.pending, oldestPendingAgeSeconds: row!.oldest_pending },
        endpoints: {
          failing: row!.failing,
          disabledFailing: row!.disabled_failing,
          disabledIntegrator: row!.disabled_integrator,
        },
      };
    },
    pool(): PoolStats {
      const pool = (
        orm.em.getKnex().client as {
          pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number; max: number };
        }
      ).pool;
      return pool
        ? { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires(), max: pool.max }
        : { used: 0, free: 0, pending: 0, max: 0 };
    },
  };
}

export type OperationalStats = ReturnType<typeof operationalStats>;
