import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import Cursor from 'pg-cursor';
import { Job, type JobStatus } from '../../domain/job.ts';
import type { OrderFilter } from '../../domain/orders.ts';
import type { PartnerOrderQueries } from '../../domain/ports.ts';

// Hand-written SQL on a driver connection, past the ORM: these are the hot read paths (docs/BENCHMARKS.md),
// and no identity map should hold 60,000 jobs. The statuses are literals so that the planner matches the
// partial index jobs_partner_active_listing_idx.
const ACTIVE = `status not in ('new', 'cancelled', 'closed', 'completed', 'invoice sent')`;
const COLUMNS = `api_id, brand_account_id, partner_id, name, status, invoicing_eid, eid, ext_partner_id, customer,
  customer_billing, shipping_address, products, documents, order_type, project_id, project_name, appointment_start,
  appointment_end, start_timestamp, finish_timestamp, created_at, updated_at`;
const BATCH = 1000;

interface JobRow {
  api_id: string; brand_account_id: string; partner_id: string | null; name: string; status: JobStatus;
  invoicing_eid: string | null; eid: string | null; ext_partner_id: string | null; customer: Job['customer'];
  customer_billing: Job['customerBilling']; shipping_address: Job['shippingAddress']; products: Job['products'];
  documents: Job['documents']; order_type: string | null; project_id: string | null; project_name: string | null;
  appointment_start: string | null; appointment_end: string | null; start_timestamp: string | null; finish_timestamp: string | null;
  created_at: string; updated_at: string;
}

// The driver, as MikroORM sets it up, hands timestamptz over as PostgreSQL text ("2026-11-01 12:10:00.123+00").
const time = (value: string | null) => (value === null ? null : new Date(value));

const toJob = (r: JobRow) => new Job({
  apiId: r.api_id, brandAccountId: r.brand_account_id, partnerId: r.partner_id, name: r.name, status: r.status,
  invoicingEid: r.invoicing_eid, eid: r.eid, extPartnerId: r.ext_partner_id, customer: r.customer,
  customerBilling: r.customer_billing, shippingAddress: r.shipping_address, products: r.products, documents: r.documents,
  orderType: r.order_type, projectId: r.project_id, projectName: r.project_name, appointmentStart: time(r.appointment_start),
  appointmentEnd: time(r.appointment_end), startTimestamp: time(r.start_timestamp), finishTimestamp: time(r.finish_timestamp),
  createdAt: time(r.created_at)!, updatedAt: time(r.updated_at)!,
});

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

export class SqlPartnerOrderQueries implements PartnerOrderQueries {
  constructor(private readonly em: EntityManager) {}

  /**
   * Per partner an index-only top-(offset+limit) on (partner_id, updated_at desc, api_id), merged, then the
   * page's rows fetched by key: page 1 reads ~limit entries per partner instead of sorting the whole scope.
   */
  async page(partnerIds: readonly string[], filter: OrderFilter, offset: number, limit: number): Promise<Job[]> {
    const params: unknown[] = [partnerIds, offset + limit, limit, offset];
    const where = filters(filter, params);
    const sql = `
      select ${COLUMNS.split(',').map((c) => `j.${c.trim()}`).join(', ')}
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
    return this.withClient(async (client) => (await client.query<JobRow>(sql, params)).rows.map(toJob));
  }

  async count(partnerIds: readonly string[], filter: OrderFilter): Promise<number> {
    const params: unknown[] = [partnerIds];
    const sql = `select count(*)::int as n from jobs where partner_id = any($1::uuid[])${filters(filter, params)}`;
    return this.withClient(async (client) => (await client.query<{ n: number }>(sql, params)).rows[0]!.n);
  }

  async *stream(partnerIds: readonly string[], filter: OrderFilter, offset: number, limit: number | null): AsyncIterable<Job[]> {
    const params: unknown[] = [partnerIds, offset];
    const where = filters(filter, params);
    let limitSql = '';
    if (limit !== null) {
      params.push(limit);
      limitSql = ` limit $${params.length}`;
    }
    const sql = `select ${COLUMNS} from jobs where partner_id = any($1::uuid[])${where}
      order by updated_at desc, api_id offset $2${limitSql}`;
    const knex = this.em.getKnex();
    const client = (await knex.client.acquireConnection()) as pg.PoolClient;
    const cursor = client.query(new Cursor<JobRow>(sql, params));
    try {
      for (;;) {
        const rows = await cursor.read(BATCH);
        if (rows.length === 0) return;
        yield rows.map(toJob);
      }
    } finally {
      // Also reached when the consumer stops early (client gone): the cursor is closed, the connection returned.
      await cursor.close().catch(() => {});
      await knex.client.releaseConnection(client);
    }
  }

  private async withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const knex = this.em.getKnex();
    const client = (await knex.client.acquireConnection()) as pg.PoolClient;
    try {
      return await work(client);
    } finally {
      await knex.client.releaseConnection(client);
    }
  }
}
