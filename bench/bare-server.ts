// The bare peer of bench/partner-orders: node:http + pg, no framework, no auth, no validation; the same
// SQL (imported from the adapter), the same renderer, the same bytes. PORT, DATABASE_URL, MASTER_ID.
import { createServer } from 'node:http';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { countQuery, type JobRow, pageQuery, rowsToJobs } from '../adapters/persistence/partner-order-queries.ts';
import { JOB_COLUMNS } from '../adapters/persistence/rows.ts';
import { POLLED_EID, renderOrderStatus } from '../domain/payloads.ts';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 8 });
const masterId = process.env.MASTER_ID!;
const format = { transformer: 'partner-format', version: '1.3.0' } as const;
const scopeOf = async () =>
  (
    await pool.query<{ ids: string[] }>('select array_agg(id) as ids from accounts where id = $1 or parent_id = $1', [
      masterId,
    ])
  ).rows[0]!.ids;

const server = createServer(async (req, res) => {
  const url = new URL(req.url!, 'http://x');
  const partnerIds = await scopeOf();
  const filter = { updatedSince: null, active: url.searchParams.get('active') === 'true' };
  if (url.pathname === '/page') {
    const page = Number(url.searchParams.get('page') ?? 1);
    const pageSize = Math.min(Number(url.searchParams.get('pageSize') ?? 50), 200);
    const pq = pageQuery(partnerIds, filter, (page - 1) * pageSize, pageSize);
    const cq = countQuery(partnerIds, filter);
    const [rows, count] = await Promise.all([
      pool.query<JobRow>(pq.text, pq.values),
      pool.query<{ n: number }>(cq.text, cq.values),
    ]);
    const body = JSON.stringify({
      items: rowsToJobs(rows.rows).map((j) => renderOrderStatus(j, format, POLLED_EID)),
      page,
      pageSize,
      total: count.rows[0]!.n,
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  const client = await pool.connect();
  try {
    res.writeHead(200, { 'content-type': 'application/json' });
    let first = true;
    // The simplest stream there is: one statement through a server-side cursor, 500 rows a read, on a held connection.
    const active = filter.active
      ? ` and status not in ('new', 'cancelled', 'closed', 'completed', 'invoice sent')`
      : '';
    const cursor = client.query(
      new Cursor<JobRow>(
        `select ${JOB_COLUMNS} from jobs where partner_id = any($1::uuid[])${active} order by updated_at desc, api_id`,
        [partnerIds],
      ),
    );
    for (let rows = await cursor.read(500); rows.length > 0; rows = await cursor.read(500)) {
      const jobs = rowsToJobs(rows);
      let chunk = first ? '[' : '';
      for (const job of jobs) {
        chunk += (first ? '' : ',') + JSON.stringify(renderOrderStatus(job, format, POLLED_EID));
        first = false;
      }
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
    }
    await cursor.close();
    res.end(first ? '[]' : ']');
  } finally {
    client.release();
  }
});
server.keepAliveTimeout = 65_000;
// The same start line as the service's, so that one helper can start both.
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () =>
  console.log(`{"port":${(server.address() as { port: number }).port},"role":"bare"}`),
);
