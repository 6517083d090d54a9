// The bare peer of bench/events-feed: one pg client paging an endpoint's feed by position, as the service's page query
// does, and parsing every payload; no HTTP, no auth, no sequencing round before each page. Prints
// {"read":N,"pages":P,"seconds":S,"p50":ms,"p99":ms}. DATABASE_URL, ENDPOINT_ID, LIMIT.
import pg from 'pg';
import { percentile } from './report.ts';

const endpointId = process.env.ENDPOINT_ID!;
const limit = Number(process.env.LIMIT ?? 500);
const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
await db.connect();
const PAGE =
  'select position, payload::text as payload from events where endpoint_id = $1 and position > $2 order by position limit $3';

// Warm-up, as the service gets: a few pages from the start, not timed.
let after = '0';
for (let i = 0; i < 10; i++) {
  const { rows } = await db.query<{ position: string; payload: string }>({
    name: 'page',
    text: PAGE,
    values: [endpointId, after, limit],
  });
  for (const row of rows) JSON.parse(row.payload);
  after = rows.at(-1)?.position ?? after;
}

after = '0';
let read = 0;
let pages = 0;
const pageMs: number[] = [];
const started = performance.now();
for (;;) {
  const t = performance.now();
  const { rows } = await db.query<{ position: string; payload: string }>({
    name: 'page',
    text: PAGE,
    values: [endpointId, after, limit],
  });
  let items = 0;
  for (const row of rows) if ((JSON.parse(row.payload) as { _eid?: string })._eid) items++;
  pageMs.push(performance.now() - t);
  pages++;
  read += items;
  after = rows.at(-1)?.position ?? after;
  if (rows.length < limit) break;
}
const seconds = (performance.now() - started) / 1000;
console.log(JSON.stringify({ read, pages, seconds, p50: percentile(pageMs, 0.5), p99: percentile(pageMs, 0.99) }));
await db.end();
