// npm run bench:claims-behind-blocked — what a delivery claim costs while one failing endpoint has many orders with
// several events each waiting. Per-order order (CONTRACT §7) holds an order's later events until its first is done;
// while the failing endpoint backs off, those later events are due but blocked, and they are older than the other
// tenants' new events, so they fill the head of due rows and every claim goes through the per-endpoint step, which
// walks them. On a PostgreSQL server of the bench's own: for each count of blocked rows (BENCH_BLOCKED, ORDER_EVENTS
// events an order, the first backing off for an hour), BENCH_CLAIMS claims of BENCH_CLAIM (claim_deliveries_v6) as
// the worker makes them (64 at most, 4 an endpoint), each rolled back so that every claim sees the same queue,
// beside 16 healthy endpoints with 4 due deliveries each; timed by the client on 127.0.0.1. Writes its section of
// docs/BENCHMARKS.md.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startTempPostgres, type TempPostgres } from '../tests/support/temp-postgres.ts';
import { codeLine, median, percentile, writeSection } from './report.ts';
import { migratedDatabase, timed } from './temp-database.ts';

const BLOCKED = (process.env.BENCH_BLOCKED ?? '0,1000,10000,50000').split(',').map(Number);
const CLAIMS = Number(process.env.BENCH_CLAIMS ?? 200);
const ORDER_EVENTS = 6;
const HEALTHY = 16;
const HEALTHY_DUE = 4;
const LIMIT = 64;
const PER_ENDPOINT = 4;

// Events and their queue rows in one statement: `$5` orders of endpoint `$2`, each with `$6` events, due since `$4`
// seconds ago; with `$7` the first of each order backs off (attempts 3, due in an hour) and the others wait behind it.
const QUEUE = `
with made as (
  insert into events (id, account_id, scope, type, order_id, payload, endpoint_id, position, created_at)
  select gen_random_uuid(), $1, 'brand', 'OrderStatusEvent', $3 || s.o, json_build_object('pad', repeat('x', 700)),
    $2, nextval('event_feed_position_seq'), now()
  from (select o, k from generate_series(1, $5::int) o, generate_series(1, $6::int) k order by o, k) s
  returning id, endpoint_id, order_id, position, created_at)
insert into delivery_queue
  (delivery_id, event_id, endpoint_id, order_id, position, attempts, next_attempt_at, created_at)
select gen_random_uuid(), m.id, m.endpoint_id, m.order_id, m.position,
  case when first then 3 else 0 end,
  case when first then now() + interval '1 hour' else now() - make_interval(secs => $4) end, m.created_at
from (select m.*, $7 and m.position = min(m.position) over (partition by m.order_id) as first from made m) m`;

const ENDPOINT = `insert into webhook_configs (id, account_id, scope, url, transformer, version, enabled, created_at,
  updated_at) values ($1, $2, 'brand', 'http://127.0.0.1:9/hook', 'default', '1.3.0', true, now(), now())`;

const CLAIM_FUNCTION = process.env.BENCH_CLAIM ?? 'claim_deliveries_v6';
const CLAIM = `select count(*)::int as n from ${CLAIM_FUNCTION}(now(), now() + interval '30 seconds', ${LIMIT},
  gen_random_uuid(), ${PER_ENDPOINT}, '{}'::uuid[], '{}'::integer[], 0)`;

interface Stage {
  blocked: number;
  ms: number[];
  handedOut: number;
}

async function measure(server: TempPostgres) {
  const url = await migratedDatabase(server, 'claims_behind_blocked');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // An account and its endpoint for each tenant. Accounts are not what is measured: the endpoint's foreign key is
  // left unchecked (the queue's triggers, which the measure needs, run as they do in the service).
  const tenant = async () => {
    const [account, endpoint] = [randomUUID(), randomUUID()];
    await client.query('set session_replication_role = replica');
    await client.query(ENDPOINT, [endpoint, account]);
    await client.query('set session_replication_role = origin');
    return { account, endpoint };
  };
  const failing = await tenant();
  for (let i = 0; i < HEALTHY; i++) {
    const { account, endpoint } = await tenant();
    // Newer than the blocked rows (due a second ago against a minute): other tenants' events of now.
    await client.query(QUEUE, [account, endpoint, `h${i}-`, 1, HEALTHY_DUE, 1, false]);
  }
  const stages: Stage[] = [];
  let blocked = 0;
  try {
    for (const target of BLOCKED) {
      const orders = Math.ceil((target - blocked) / (ORDER_EVENTS - 1));
      if (orders > 0) {
        await client.query(QUEUE, [failing.account, failing.endpoint, `f${blocked}-`, 60, orders, ORDER_EVENTS, true]);
        blocked += orders * (ORDER_EVENTS - 1);
      }
      await client.query('vacuum analyze delivery_queue');
      const ms: number[] = [];
      let handedOut = 0;
      for (let i = 0; i < CLAIMS; i++) {
        await client.query('begin');
        ms.push(
          await timed(async () => {
            handedOut = (await client.query<{ n: number }>(CLAIM)).rows[0]!.n;
          }),
        );
        await client.query('rollback');
      }
      stages.push({ blocked, ms, handedOut });
    }
    return stages;
  } finally {
    await client.end().catch(() => {});
  }
}

const server = await startTempPostgres({ shared_buffers: '512MB' });
process.once('exit', () => server.destroySync());
process.once('SIGINT', () => process.exit(130));
try {
  const stages = await measure(server).catch(async (error) => {
    console.error(error, await server.log());
    throw error;
  });
  const body = [
    `${codeLine()} \`npm run bench:claims-behind-blocked\` (BENCH_BLOCKED=${BLOCKED.join(',')}, ` +
      `BENCH_CLAIMS=${CLAIMS}, BENCH_CLAIM=${CLAIM_FUNCTION}), ${new Date().toISOString().slice(0, 10)}: ` +
      "on a PostgreSQL server of the bench's own. " +
      `One failing endpoint's orders, ${ORDER_EVENTS} events each: the first backing off for an hour, the others due ` +
      `for a minute and blocked behind it (per-order order); beside them ${HEALTHY} healthy endpoints with ` +
      `${HEALTHY_DUE} deliveries due for a second each. Each claim as the worker makes it (${CLAIM_FUNCTION}, ` +
      `${LIMIT} at most, ${PER_ENDPOINT} an endpoint, nothing held, no sequencing), rolled back so that every claim ` +
      'sees the same queue; timed by the client on 127.0.0.1 (ms).',
    '',
    '| blocked rows of the failing endpoint | claim p50 | claim p99 | deliveries handed out |',
    '|---:|---:|---:|---:|',
    ...stages.map(
      (s) =>
        `| ${s.blocked.toLocaleString('en')} | ${median(s.ms).toFixed(2)} | ${percentile(s.ms, 0.99).toFixed(2)} | ` +
        `${s.handedOut} |`,
    ),
  ].join('\n');
  console.log(body);
  await writeSection('Delivery claims behind a failing endpoint’s blocked orders', body);
} finally {
  await server.destroy();
}
