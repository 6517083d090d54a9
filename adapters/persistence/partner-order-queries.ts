import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import Cursor from 'pg-cursor';
import type { Job } from '../../domain/job.ts';
import type { OrderFilter } from '../../domain/orders.ts';
import type { PartnerOrderQueries } from '../../domain/ports.ts';
import { withDriverConnection } from './driver.ts';
import { JOB_COLUMNS, toJob, type JobRow } from './rows.ts';
import { unavailableOr } from './unavailable.ts';

export type { JobRow };

// Hand-written SQL on a driver connection, past the ORM: these are the hot read paths (docs/BENCHMARKS.md),
// and no identity map should hold 60,000 jobs. The statuses are literals so that the planner matches the
// partial index jobs_partner_active_listing_idx.
const ACTIVE = `status not in ('new', 'cancelled', 'closed', 'completed', 'invoice sent')`;
const COLUMNS = JOB_COLUMNS;
const BATCH = 500;

/** `where` conditions after the partner condition; parameters continue from `next`. */
function filters(filter: OrderFilter, params: unknown[]) {
  let sql = '';
  if (filter.updatedSince) {
    params.push(filter.updatedSince);
    sql += ` and updated_at >= $${params.length}`;
  }
  if (filter.active) sql += ` and ${ACTIVE}`;
  return sql;
}

/** A statement with a name is prepared once per connection; the name must always go with the same text. */
export interface Query { name?: string; text: string; values: unknown[] }

/** Past this depth the per-partner top-k lists grow long: merge the partners' index scans instead. */
const DEEP = 1000;
const variant = (filter: OrderFilter) => `${filter.active ? 'active' : 'all'}${filter.updatedSince ? '-since' : ''}`;
const pageColumns = COLUMNS.split(',').map((c) => `j.${c.trim()}`).join(', ');

/**
 * The page's keys, then its rows fetched by key. Shallow pages: per partner an index-only top-(offset+limit) on
 * (partner_id, updated_at desc, api_id), merged and cut; page 1 reads ~limit entries per partner instead of
 * sorting the scope. Deep pages: one ordered index scan per partner under a UNION ALL, which PostgreSQL merges
 * (Merge Append) without sorting, skipping to the offset.
 */
export function pageQuery(partnerIds: readonly string[], filter: OrderFilter, offset: number, limit: number, deepFrom = DEEP): Query {
  if (offset + limit <= deepFrom) {
    const params: unknown[] = [partnerIds, offset + limit, limit, offset];
    const where = filters(filter, params);
    const text = `
      select ${pageColumns}
      from (
        select x.api_id, x.updated_at
        from unnest($1::uuid[]) as p(partner_id)
        cross join lateral (
          select api_id, updated_at from jobs
          where partner_id = p.partner_id${where}
          order by updated_at desc, api_id
          limit $2
        ) x
        order by x.updated_at desc, x.api_id
        limit $3 offset $4
      ) k
      join jobs j on j.api_id = k.api_id
      order by k.updated_at desc, k.api_id`;
    return { name: `jobs-page-${variant(filter)}`, text, values: params };
  }
  const params: unknown[] = [limit, offset];
  const where = filters(filter, params);
  const branches = partnerIds.map((id) => {
    params.push(id);
    return `(select api_id, updated_at from jobs where partner_id = $${params.length}${where} order by updated_at desc, api_id)`;
  });
  const text = `
    select ${pageColumns}
    from (select api_id, updated_at from (${branches.join(' union all ')}) u order by updated_at desc, api_id limit $1 offset $2) k
    join jobs j on j.api_id = k.api_id
    order by k.updated_at desc, k.api_id`;
  return { text, values: params };
}

/**
 * Index-only on (partner_id), or on the small partial index of active rows, on a vacuumed table. Not prepared:
 * a generic plan cannot see the scope's size and picks the wide listing index (3 times slower at 60k rows).
 */
export function countQuery(partnerIds: readonly string[], filter: OrderFilter): Query {
  const params: unknown[] = [partnerIds];
  return { text: `select count(*)::int as n from jobs where partner_id = any($1::uuid[])${filters(filter, params)}`, values: params };
}

export function streamQuery(partnerIds: readonly string[], filter: OrderFilter, offset: number, limit: number | null): Query {
  const params: unknown[] = [partnerIds, offset];
  const where = filters(filter, params);
  let limitSql = '';
  if (limit !== null) {
    params.push(limit);
    limitSql = ` limit $${params.length}`;
  }
  return {
    text: `select ${COLUMNS} from jobs where partner_id = any($1::uuid[])${where} order by updated_at desc, api_id offset $2${limitSql}`,
    values: params,
  };
}

/** How long closing a cursor may take: on a connection that died, pg-cursor's close waits for an answer forever. */
const CLOSE_TIMEOUT_MS = 5000;

/**
 * Reads a query's rows through a cursor, `BATCH` at a time, as jobs. Closes the cursor however the loop ends; a read
 * that failed (a connection lost) leaves nothing to close, and throws, so that the caller discards the connection.
 */
export async function* readInBatches(client: pg.ClientBase, query: Query): AsyncIterable<Job[]> {
  const cursor = client.query(new Cursor<JobRow>(query.text, query.values));
  let failed = false;
  try {
    for (;;) {
      const rows = await cursor.read(BATCH).catch((error: unknown) => { failed = true; throw error; });
      if (rows.length === 0) return;
      yield rows.map(toJob);
    }
  } finally {
    if (!failed) {
      let timer: NodeJS.Timeout | undefined;
      const gaveUp = new Promise<void>((resolve) => { timer = setTimeout(resolve, CLOSE_TIMEOUT_MS); });
      await Promise.race([cursor.close().catch(() => {}), gaveUp]);
      clearTimeout(timer);
    }
  }
}

export const rowsToJobs = (rows: JobRow[]) => rows.map(toJob);

export class SqlPartnerOrderQueries implements PartnerOrderQueries {
  constructor(private readonly em: EntityManager) {}

  page(partnerIds: readonly string[], filter: OrderFilter, offset: number, limit: number): Promise<Job[]> {
    const query = pageQuery(partnerIds, filter, offset, limit);
    return withDriverConnection(this.em, async (client) => rowsToJobs((await client.query<JobRow>(query)).rows));
  }

  count(partnerIds: readonly string[], filter: OrderFilter): Promise<number> {
    const query = countQuery(partnerIds, filter);
    return withDriverConnection(this.em, async (client) => (await client.query<{ n: number }>(query)).rows[0]!.n);
  }

  async *stream(partnerIds: readonly string[], filter: OrderFilter, offset: number, limit: number | null): AsyncIterable<Job[]> {
    const knex = this.em.getKnex();
    // A database away is said as such (a 503 while no byte of the answer is out), however far the stream got.
    const client = (await knex.client.acquireConnection().catch((error: unknown) => { throw unavailableOr(error); })) as pg.PoolClient & { __knex__disposed?: unknown };
    try {
      // statement_timeout bounds a statement, and a cursor is one statement for as long as the client reads: a
      // listing may stream for minutes (no server-side cap), so its session has none while it streams.
      await client.query('set statement_timeout = 0');
      yield* readInBatches(client, streamQuery(partnerIds, filter, offset, limit));
    } catch (error) {
      // A connection that failed mid-stream is not given back for reuse: knex's pool discards one marked disposed.
      client.__knex__disposed = error;
      throw unavailableOr(error);
    } finally {
      if (!client.__knex__disposed) await client.query('reset statement_timeout').catch(() => {});
      // Also reached when the consumer stops early (client gone): the connection goes back to the pool.
      await knex.client.releaseConnection(client);
    }
  }
}
