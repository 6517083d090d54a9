import type { EntityManager } from '@mikro-orm/postgresql';
import type { JobIdentifier } from '../../domain/command.ts';
import type { Job } from '../../domain/job.ts';
import type { JobRepository } from '../../domain/ports.ts';
import { type ReadOn, withDriverConnection } from './driver.ts';
import { JOB_COLUMNS, type JobRow, jobValues, toJob } from './rows.ts';

const COLUMN = {
  jobApiId: 'api_id',
  invoicingEid: 'invoicing_eid',
  gidOrderNumber: 'name',
  yourOrderID: 'ext_partner_id',
} as const;
const UPDATABLE = JOB_COLUMNS.split(',')
  .map((c) => c.trim())
  .filter((c) => c !== 'api_id' && c !== 'created_at');
const PLACEHOLDERS = UPDATABLE.length + 2;
const CREATED_AT = JOB_COLUMNS.split(',')
  .map((c) => c.trim())
  .indexOf('created_at');

/**
 * Jobs with SQL past the ORM, prepared: every command and every event reads or writes one, and the listings read
 * them in bulk (partner-order-queries.ts). A save writes at once, in the unit of work's transaction: an UPDATE for a
 * job this unit of work read, an INSERT for a new one (whose apiId taken meanwhile is a unique-index conflict).
 */
export class SqlJobRepository implements JobRepository {
  private readonly read = new Set<string>();
  constructor(
    private readonly em: EntityManager,
    private readonly reads: ReadOn = withDriverConnection,
  ) {}

  private async select(name: string, text: string, values: unknown[], on = withDriverConnection): Promise<Job[]> {
    const jobs = await on(this.em, async (client) =>
      (await client.query<JobRow>({ name, text, values })).rows.map(toJob),
    );
    for (const job of jobs) this.read.add(job.apiId);
    return jobs;
  }

  async get(apiId: string) {
    // A replica may answer it (the single-order poll; only a unit that allows it asks one).
    return (
      (await this.select('job-get', `select ${JOB_COLUMNS} from jobs where api_id = $1`, [apiId], this.reads))[0] ??
      null
    );
  }

  async getForChange(apiId: string) {
    return (
      (
        await this.select('job-get-for-change', `select ${JOB_COLUMNS} from jobs where api_id = $1 for update`, [apiId])
      )[0] ?? null
    );
  }

  async lockForChange(apiIds: readonly string[]) {
    if (apiIds.length === 0) return;
    await withDriverConnection(this.em, (client) =>
      client.query({
        name: 'jobs-lock-for-change',
        text: 'select 1 from jobs where api_id = any($1::text[]) order by api_id for update',
        values: [[...apiIds]],
      }),
    );
  }

  findByIdentifier(identifier: JobIdentifier, partnerIds: readonly string[], limit: number) {
    const column = COLUMN[identifier.kind];
    return this.select(
      `job-by-${column}`,
      `select ${JOB_COLUMNS} from jobs where ${column} = $1 and partner_id = any($2::uuid[]) order by api_id limit $3 for update`,
      [identifier.value, partnerIds, limit],
    );
  }

  async identifies(identifier: JobIdentifier) {
    const column = COLUMN[identifier.kind];
    return withDriverConnection(
      this.em,
      async (client) =>
        (
          await client.query({
            name: `job-exists-${column}`,
            text: `select 1 from jobs where ${column} = $1 limit 1`,
            values: [identifier.value],
          })
        ).rows.length > 0,
    );
  }

  async save(job: Job) {
    const existing = this.read.has(job.apiId);
    await withDriverConnection(this.em, (client) =>
      client.query(
        existing
          ? {
              name: 'job-update',
              text: `update jobs set ${UPDATABLE.map((c, i) => `${c} = $${i + 2}`).join(', ')} where api_id = $1`,
              values: jobValues(job).filter((_, i) => i !== CREATED_AT),
            }
          : {
              name: 'job-insert',
              text: `insert into jobs (${JOB_COLUMNS}) values (${Array.from({ length: PLACEHOLDERS }, (_, i) => `$${i + 1}`).join(', ')})`,
              values: jobValues(job),
            },
      ),
    );
    this.read.add(job.apiId);
  }

  async nextOrderNumber() {
    return withDriverConnection(this.em, async (client) => {
      const {
        rows: [row],
      } = await client.query<{ n: string }>({
        name: 'order-number',
        text: `select nextval('order_number_seq')::text as n`,
      });
      return `O-${row!.n.padStart(10, '0')}`;
    });
  }
}
