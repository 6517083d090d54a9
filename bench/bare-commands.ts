// The bare peer of bench/commands: node:http + pg, no framework, no auth, no validation; it writes the same
// accepted-command row as the service, in one transaction per request, and answers 202. PORT, DATABASE_URL, BRAND_ID.
import { createServer } from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const brandId = process.env.BRAND_ID!;

const server = createServer((req, res) => {
  let raw = '';
  req.on('data', (d: Buffer) => {
    raw += d;
  });
  req.on('end', async () => {
    const body = JSON.parse(raw) as { _cid: string; _type: string };
    const answer = JSON.stringify({ _cid: body._cid, _type: body._type, status: 'accepted' });
    const now = new Date();
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query(
        `insert into commands (account_id, cid, type, body, status, answer, created_at, updated_at)
         values ($1, $2, $3, $4::jsonb, 'accepted', $5::json, $6, $6) on conflict (account_id, cid) do nothing`,
        [brandId, body._cid, body._type, raw, answer, now],
      );
      await client.query('commit');
    } finally {
      client.release();
    }
    res.writeHead(202, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () =>
  console.log(`{"port":${(server.address() as { port: number }).port},"role":"bare"}`),
);
