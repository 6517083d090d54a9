import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Job } from '../../domain/job.ts';
import type { OrderFilter } from '../../domain/orders.ts';
import type { PartnerOrderQueries } from '../../domain/ports.ts';
import { type ReadOn, withDriverConnection } from './driver.ts';
import { JOB_COLUMNS, type JobRow, toJob } from './rows.ts';
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
export interface Query {
  name?: string;
  text: string;
  values: unknown[];
}

/** Past this depth the per-partner top-k lists grow long: merge the partners' index scans instead. */
const DEEP = 1000;
const variant = (filter: OrderFilter) => `${filter.active ? 'active' : 'all'}${filter.updatedSince ? '-since' : ''}`;
const pageColumns = COLUMNS.split(',')
  .map((c) => `j.${c.trim()}`)
  .join(', ');

/**
 * The partners of `$1::uuid[]` each read as an index range of (updated_at desc, api_id) under `condition`, at most
 * `perPartner` entries; merged in listing order, cut by `cut`, and the cut's rows fetched by key.
 */
const mergedPerPartner = (condition: string, perPartner: string, cut: string) => `
  select ${pageColumns}
  from (
    select x.api_id, x.updated_at
    from unnest($1::uuid[]) as p(partner_id)
    cross join lateral (
      select api_id, updated_at from jobs
      where partner_id = p.partner_id${condition}
      order by updated_at desc, api_id
      limit ${perPartner}
    ) x
    order by x.updated_at desc, x.api_id
    ${cut}
  ) k
  join jobs j on j.api_id = k.api_id
  order by k.updated_at desc, k.api_id`;

/**
 * The page's keys, then its rows fetched by key. Shallow pages: per partner an index-only top-(offset+limit) on
 * (partner_id, updated_at desc, api_id), merged and cut; page 1 reads ~limit entries per partner instead of
 * sorting the scope. Deep pages: one ordered index scan per partner under a UNION ALL, which PostgreSQL merges
 * (Merge Append) without sorting, skipping to the offset.
 */
export function pageQuery(
  partnerIds: readonly string[],
  filter: OrderFilter,
  offset: number,
  limit: number,
  deepFrom = DEEP,
): Query {
  if (offset + limit <= deepFrom) {
    const params: unknown[] = [partnerIds, offset + limit, limit, offset];
    const where = filters(filter, params);
    const text = mergedPerPartner(where, '$2', 'limit $3 offset $4');
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
  return {
    text: `select count(*)::int as n from jobs where partner_id = any($1::uuid[])${filters(filter, params)}`,
    values: params,
  };
}

/**
 * Where a stream stands: the last row it gave, its `updated_at` as the server wrote it (microseconds kept), and the
 * `updated_at` of the first row of the batch that ended there, whose span sizes the next batch's window.
 */
interface StreamPosition {
  updatedAt: string;
  apiId: string;
  batchFrom: string;
}

// Rows after the position, written so that the index range starts at the position: a bare `a < x or (a = x and …)`
// is only a filter, and each batch rescanned every partner's index from its top (quadratic in the scope).
const AFTER = `updated_at <= $2::timestamptz and (updated_at < $2::timestamptz or api_id > $3)`;

/**
 * The next batch of a stream after `after`, in listing order, as `pageQuery` reads its shallow pages: per partner an
 * index range from the position on, merged. Each partner reads up to `limit` entries (41 partners: ~20,000 for 500
 * rows).
 */
export function afterQuery(
  partnerIds: readonly string[],
  filter: OrderFilter,
  after: StreamPosition,
  limit: number,
): Query {
  const params: unknown[] = [partnerIds, after.updatedAt, after.apiId, limit];
  const where = filters(filter, params);
  const text = mergedPerPartner(` and ${AFTER}${where}`, '$4', 'limit $4');
  return { name: `jobs-after-${variant(filter)}`, text, values: params };
}

/**
 * The same batch read only within a window of time learned from the batch before: as far back from the position as
 * 1.5 times that batch's span (~1.5 × limit rows in all at an even rate; the rate must fall by a third from one batch
 * to the next for the window to fall short). Each partner's index range is then short, so the rows are read whole and
 * sorted, with no per-partner top-k and no second lookup by key. When the window holds `limit` rows, they are exactly
 * the next `limit` (every row after the position and outside the window is older); when it holds fewer, the caller
 * asks `afterQuery`.
 */
export function windowQuery(
  partnerIds: readonly string[],
  filter: OrderFilter,
  after: StreamPosition,
  limit: number,
): Query {
  const params: unknown[] = [partnerIds, after.updatedAt, after.apiId, limit, after.batchFrom];
  const where = filters(filter, params);
  const text = `
    select ${COLUMNS} from jobs
    where partner_id = any($1::uuid[]) and ${AFTER}
      and updated_at >= $2::timestamptz - 1.5 * ($5::timestamptz - $2::timestamptz)${where}
    order by updated_at desc, api_id
    limit $4`;
  return { name: `jobs-window-${variant(filter)}`, text, values: params };
}

export const rowsToJobs = (rows: JobRow[]) => rows.map(toJob);

export class SqlPartnerOrderQueries implements PartnerOrderQueries {
  constructor(
    private readonly em: EntityManager,
    private readonly batch = BATCH,
    private readonly reads: ReadOn = withDriverConnection,
  ) {}

  page(partnerIds: readonly string[], filter: OrderFilter, offset: number, limit: number): Promise<Job[]> {
    const query = pageQuery(partnerIds, filter, offset, limit);
    return this.reads(this.em, async (client) => rowsToJobs((await client.query<JobRow>(query)).rows));
  }

  count(partnerIds: readonly string[], filter: OrderFilter): Promise<number> {
    const query = countQuery(partnerIds, filter);
    return this.reads(this.em, async (client) => (await client.query<{ n: number }>(query)).rows[0]!.n);
  }

  /**
   * Keyset batches, each one short statement on a pooled connection given back as soon as it has answered: however
   * slowly the consumer reads, and whether it reads at all, the stream holds no connection while it waits (the
   * embedded database has one). The first batch skips `offset` as a page would; each next one starts after the last
   * row, and is asked for as soon as the batch before has arrived, so that the database reads it while that batch is
   * rendered and written (one statement ahead, then nothing until the consumer asks again).
   */
  async *stream(
    partnerIds: readonly string[],
    filter: OrderFilter,
    offset: number,
    limit: number | null,
  ): AsyncIterable<Job[]> {
    let left = limit ?? Infinity;
    let size = Math.min(this.batch, left);
    let pending: Promise<JobRow[]> | null = this.read(partnerIds, filter, offset, null, size).rows;
    while (pending) {
      const rows: JobRow[] = await pending;
      left -= rows.length;
      pending = null;
      if (rows.length === size && left > 0) {
        const after = {
          updatedAt: rows.at(-1)!.updated_at,
          apiId: rows.at(-1)!.api_id,
          batchFrom: rows[0]!.updated_at,
        };
        size = Math.min(this.batch, left);
        const next = this.read(partnerIds, filter, offset, after, size);
        pending = next.rows;
        // Rendering and writing this batch take milliseconds without a pause: the next statement goes out first, or
        // taking its connection would wait behind them and the database would sit idle meanwhile.
        await next.sent;
      }
      if (rows.length > 0) yield rowsToJobs(rows);
    }
  }

  /**
   * One batch's statement: its rows, and when it has gone out (or failed to). A read ahead that fails is thrown when
   * the stream comes to it, not left unhandled.
   */
  private read(
    partnerIds: readonly string[],
    filter: OrderFilter,
    offset: number,
    after: StreamPosition | null,
    size: number,
  ) {
    let gone = () => {};
    const sent = new Promise<void>((resolve) => {
      gone = resolve;
    });
    // A database away is said as such (a 503 while no byte of the answer is out), however far the stream got.
    const rows = this.reads(this.em, (client) => {
      const answer = this.next(client, partnerIds, filter, offset, after, size);
      gone();
      return answer;
    }).catch((error: unknown) => {
      throw unavailableOr(error);
    });
    rows.then(gone, gone);
    return { rows, sent };
  }

  private async next(
    client: pg.PoolClient,
    partnerIds: readonly string[],
    filter: OrderFilter,
    offset: number,
    after: StreamPosition | null,
    size: number,
  ) {
    if (!after) return takeRows(await client.query<JobRow>(pageQuery(partnerIds, filter, offset, size)));
    const rows = takeRows(await client.query<JobRow>(windowQuery(partnerIds, filter, after, size)));
    return rows.length === size
      ? rows
      : takeRows(await client.query<JobRow>(afterQuery(partnerIds, filter, after, size)));
  }
}

/**
 * The rows, moved out of the driver's result into an array made now. pg makes a result's array when it sends the
 * statement; V8 scavenges while the process idles waiting for the answer, so that array is already a survivor when
 * the rows arrive, is promoted at the next scavenge, and, dead but not yet collected, keeps the whole batch alive
 * through the one after: every batch went to the old generation (3 MB a scavenge, 326 MB peak RSS for 60k orders).
 */
function takeRows(result: pg.QueryResult<JobRow>): JobRow[] {
  return result.rows.splice(0);
}
