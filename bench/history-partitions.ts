// npm run bench:history-partitions — the history (events, deliveries, attempts) in day partitions against the tables
// as they were before (migration 20261129140000), in the same run, on a PostgreSQL server of its own
// (tests/support/temp-postgres.ts). Each layout gets BENCH_EVENTS events (10 million) over BENCH_DAYS simulated days
// (40): one delivery and one attempt each, dated as the test clock would date them. Then, for each:
// - the load's insert rate (bulk statements, a day at a time) and the outbox's own (a transaction of 10 events and
//   their deliveries, as a command writes them) on the full tables;
// - a feed page (100 events after a random position) and one delivery read in full (event and attempts), by id;
// - the purge of the oldest day, as the worker runs it (batches of 500 row by row before; one call after);
// - the size of the three tables with their indexes, before and after the purge.
// Writes its section of docs/BENCHMARKS.md.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startTempPostgres } from '../tests/support/temp-postgres.ts';
import { codeLine, median, percentile, writeSection } from './report.ts';
import { migratedDatabase } from './temp-database.ts';

const DAY = 86_400_000;
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000);
const DAYS = Number(process.env.BENCH_DAYS ?? 40);
const ENDPOINTS = 100;
const CHUNK = 25_000;
const BEFORE = 'Migration20261129140000_sequence_round_waiting';
// The first simulated day: a few days after the real clock's, past the partition of the past that the migration bounds
// two days after it (legacyBoundSql), whatever day the bench runs.
const START = Math.floor(Date.now() / DAY) * DAY + 4 * DAY;

type Layout = 'tables' | 'partitions';
const DELIVERY_COLUMNS =
  '(id, event_id, endpoint_id, account_id, order_id, status, attempts, next_attempt_at, created_at, updated_at)';

// The purge as it ran before partitions (delivery-log.ts at 20261129140000), attempts going by the foreign key's
// cascade.
const PURGE_BEFORE = [
  `delete from deliveries where id in (
     select d.id from deliveries d join events e on e.id = d.event_id
     where e.created_at < $1 and d.status <> 'pending'
     order by e.created_at limit $2 for update of d skip locked)`,
  `with purged as (
     delete from events where id in (
       select e.id from events e
       where e.created_at < $1 and not exists (select 1 from deliveries d where d.event_id = e.id)
       order by e.created_at limit $2)
     returning endpoint_id, position),
   horizon as (
     insert into event_feed_purged (endpoint_id, position)
     select endpoint_id, max(position) from purged where endpoint_id is not null and position is not null
     group by endpoint_id
     on conflict (endpoint_id) do update set position = greatest(event_feed_purged.position, excluded.position))
   select count(*)::int as n from purged`,
];

// How each layout reads one delivery in full (delivery-log.ts before and after): the event and the attempts by key.
const DETAIL: Record<Layout, string> = {
  tables: `select d.id, e.payload::text,
      (select json_agg(a.status_code) from delivery_attempts a where a.delivery_id = d.id)
    from deliveries d join events e on e.id = d.event_id where d.id = $1`,
  partitions: `select d.id, e.payload::text, (select json_agg(a.status_code) from delivery_attempts a
      where a.delivery_id = d.id and a.created_at in (d.created_at, '-infinity'))
    from deliveries d join events e on e.id = d.event_id and e.created_at = d.created_at where d.id = $1`,
};

const FEED = `select position, created_at, payload::text as payload from events
  where endpoint_id = $1 and position > $2 and position is not null order by position limit 100`;

/** One chunk of a day: events, their deliveries (delivered) and one attempt each, in one statement. */
const load = (layout: Layout) => `
  with e as (
    insert into events (id, account_id, scope, type, order_id, payload, endpoint_id, position, created_at)
    select gen_random_uuid(), $1, 'brand', 'OrderStatusEvent', 'order-' || (g % 100000),
      json_build_object('_type', 'OrderStatusEvent', '_v', '1.3.0', 'status', 'open', 'note', repeat('x', 150)),
      ($2::uuid[])[1 + g % ${ENDPOINTS}], nextval('event_feed_position_seq'),
      $3::timestamptz + g * ($5::bigint * interval '1 microsecond')
    from generate_series($4::int, $4::int + $6::int - 1) g
    returning id, endpoint_id, order_id, account_id, created_at),
  d as (
    insert into deliveries ${DELIVERY_COLUMNS}
    select gen_random_uuid(), e.id, e.endpoint_id, e.account_id, e.order_id, 'delivered', 1, e.created_at, e.created_at,
      e.created_at
    from e returning id, endpoint_id, created_at)
  insert into delivery_attempts
    (delivery_id, endpoint_id, at, status_code, duration_ms, request_url${layout === 'partitions' ? ',created_at' : ''})
  select d.id, d.endpoint_id, d.created_at + interval '40 milliseconds', 200, 40, 'https://receiver.example/hook'
    ${layout === 'partitions' ? ', d.created_at' : ''}
  from d`;

// The outbox's two statements (event-outbox.ts), for 10 events of one transaction.
const OUTBOX_EVENTS = `insert into events (id, account_id, scope, type, order_id, payload, endpoint_id, created_at)
  select gen_random_uuid(), $1, 'brand', 'OrderStatusEvent', 'steady-' || g, '{"_type":"OrderStatusEvent"}', $2, $3
  from generate_series(1, 10) g returning id`;
const OUTBOX_DELIVERIES: Record<Layout, string> = {
  tables: `insert into deliveries ${DELIVERY_COLUMNS}
    select gen_random_uuid(), e.id, e.endpoint_id, e.account_id, e.order_id, 'pending', 0, e.created_at, e.created_at,
      e.created_at
    from events e where e.id = any($1::uuid[]) order by e.seq`,
  partitions: `insert into deliveries ${DELIVERY_COLUMNS}
    select gen_random_uuid(), e.id, e.endpoint_id, e.account_id, e.order_id, 'pending', 0, e.created_at, e.created_at,
      e.created_at
    from events e where e.id = any($1::uuid[]) and e.created_at = any($2::timestamptz[]) order by e.seq`,
};

const SIZE = `select sum(pg_total_relation_size(c.oid))::bigint as bytes from pg_class c
  where c.relkind = 'r' and (c.relname in ('events', 'deliveries', 'delivery_attempts')
    or c.oid in (select relid from pg_partition_tree('events') union select relid from pg_partition_tree('deliveries')
      union select relid from pg_partition_tree('delivery_attempts')))`;

async function measure(server: Awaited<ReturnType<typeof startTempPostgres>>, layout: Layout) {
  const url = await migratedDatabase(server, `history_${layout}`, layout === 'tables' ? BEFORE : undefined);
  const db = new pg.Client({ connectionString: url });
  db.on('error', () => {}); // the server stopped under it at the end of a failed run: cleaned up below
  await db.connect();
  try {
    return await measureOn(db, layout);
  } finally {
    await db.end().catch(() => {});
  }
}

async function measureOn(db: pg.Client, layout: Layout) {
  const accountId = randomUUID();
  const endpoints = Array.from({ length: ENDPOINTS }, () => randomUUID());
  await db.query(`insert into accounts (id, name, role, created_at) values ($1, 'bench', 'brand', now())`, [accountId]);
  // The worker makes each day's partitions ahead of the clock; the simulated clock runs all the days at once here.
  if (layout === 'partitions') {
    await db.query('select history_partitions_ahead($1, $2)', [new Date(START - DAY), DAYS + 2]);
    // The partitions before the first day (of the past, and those the migration made ahead of the real clock) are
    // empty: dropped now, so that the timed purge below is the first day's alone.
    while ((await db.query<{ n: number }>('select drop_history_days($1) as n', [new Date(START)])).rows[0]!.n === 1);
  }

  const perDay = Math.floor(EVENTS / DAYS);
  const spacingUs = Math.floor((DAY * 1000) / perDay);
  const loadStarted = performance.now();
  for (let day = 0; day < DAYS; day++) {
    for (let first = 0; first < perDay; first += CHUNK) {
      const size = Math.min(CHUNK, perDay - first);
      await db.query(load(layout), [accountId, endpoints, new Date(START + day * DAY), first, spacingUs, size]);
    }
    process.stdout.write(`\r${layout}: day ${day + 1} of ${DAYS} loaded`);
  }
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  process.stdout.write('\n');
  await db.query('vacuum analyze events, deliveries, delivery_attempts');
  // The pages the vacuum dirtied are written now, not while the measures below run.
  await db.query('checkpoint');

  const now = new Date(START + (DAYS - 1) * DAY);
  const steadyStarted = performance.now();
  let steady = 0;
  while (performance.now() - steadyStarted < 5000) {
    // Each transaction at a time of its own, as the service's clock dates them.
    const at = new Date(now.getTime() + steady);
    await db.query('begin');
    const { rows } = await db.query<{ id: string }>(OUTBOX_EVENTS, [accountId, endpoints[0], at]);
    await db.query(
      OUTBOX_DELIVERIES[layout],
      layout === 'partitions' ? [rows.map((r) => r.id), [at]] : [rows.map((r) => r.id)],
    );
    await db.query('commit');
    steady += 10;
  }
  const steadyRate = steady / ((performance.now() - steadyStarted) / 1000);

  const maxPosition = Number((await db.query('select last_value from event_feed_position_seq')).rows[0].last_value);
  // Named statements, as the service sends its reads: PostgreSQL keeps their plans.
  const timed = async (name: string, sql: string, values: () => unknown[], n = 300) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      await db.query({ name, text: sql, values: values() });
      times.push(performance.now() - started);
    }
    return { p50: median(times), p99: percentile(times, 0.99) };
  };
  const feed = await timed('feed', FEED, () => [
    endpoints[Math.floor(Math.random() * ENDPOINTS)],
    Math.floor(Math.random() * maxPosition),
  ]);
  const ids = (
    await db.query<{ id: string }>('select id from deliveries tablesample system (0.01) order by random() limit 300')
  ).rows.map((r) => r.id);
  let nth = 0;
  const detail = await timed('detail', DETAIL[layout], () => [ids[nth++ % ids.length]]);

  const sizeBefore = Number((await db.query(SIZE)).rows[0].bytes);
  const cutoff = new Date(START + DAY);
  const purgeStarted = performance.now();
  let statements = 0;
  if (layout === 'partitions') {
    // As the worker's rounds call it, one day a call, until none is left; then its row purge finds nothing to take.
    for (let dropped = 1; dropped === 1; statements++) {
      dropped = (await db.query<{ n: number }>('select drop_history_days($1) as n', [cutoff])).rows[0]!.n;
      if (dropped === -1) throw new Error('drop_history_days answered busy with nothing else running');
    }
  } else {
    for (;;) {
      await db.query('begin');
      const deliveries = await db.query(PURGE_BEFORE[0]!, [cutoff, 500]);
      const events = await db.query<{ n: number }>(PURGE_BEFORE[1]!, [cutoff, 500]);
      await db.query('commit');
      statements += 2;
      if ((deliveries.rowCount ?? 0) < 500 && events.rows[0]!.n < 500) break;
    }
  }
  const purgeSeconds = (performance.now() - purgeStarted) / 1000;
  const count = async (table: string, older: boolean) =>
    Number(
      (await db.query(`select count(*) as n from ${table} where created_at ${older ? '<' : '>='} $1`, [cutoff])).rows[0]
        .n,
    );
  const left = (await count('events', true)) + (await count('deliveries', true));
  const kept = await count('events', false);
  const sizeAfter = Number((await db.query(SIZE)).rows[0].bytes);
  return {
    loadRate: EVENTS / loadSeconds,
    steadyRate,
    feed,
    detail,
    purgeSeconds,
    statements,
    left,
    kept,
    sizeBefore,
    sizeAfter,
  };
}

const server = await startTempPostgres({
  shared_buffers: '1GB',
  max_wal_size: '8GB',
  checkpoint_timeout: '30min',
  autovacuum: 'off',
});
// Some 40 GB of data: removed however the run ends (a failure, Ctrl-C).
process.once('exit', () => server.destroySync());
process.once('SIGINT', () => process.exit(130));
try {
  const tables = await measure(server, 'tables');
  // Each layout takes some 38 GB with its WAL: the first goes before the second is loaded.
  const admin = new pg.Client({ connectionString: server.url('postgres') });
  await admin.connect();
  await admin.query('drop database history_tables with (force)');
  await admin.end();
  const results = { tables, partitions: await measure(server, 'partitions') };
  const gb = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GB`;
  const ms = (x: number) => `${x.toFixed(2)} ms`;
  const row = (label: string, f: (r: (typeof results)['tables']) => string) =>
    `| ${label} | ${f(results.tables)} | ${f(results.partitions)} |`;
  const body = [
    `${codeLine()} \`npm run bench:history-partitions\` (BENCH_EVENTS=${EVENTS}, BENCH_DAYS=${DAYS}): ` +
      `${EVENTS.toLocaleString('en')} events over ${DAYS} simulated days, each with one delivery and one attempt, ` +
      "on a PostgreSQL 15 server of the bench's own (shared_buffers 1 GB, autovacuum off so that both layouts are " +
      'measured as loaded). ' +
      "Today's tables are the schema at migration 20261129140000; the partitions are the schema as it is now " +
      '(20261130000000 onwards). Reads are named statements, as the service sends them; the purge is timed from the ' +
      "first day's partitions alone (the empty ones before it are dropped first) until drop_history_days has none " +
      'left, and before row by row in batches of 500 as the worker ran it.',
    '',
    "| | today's tables | day partitions |",
    '|---|---|---|',
    row('load, events (with their deliveries and attempts) per second', (r) =>
      Math.round(r.loadRate).toLocaleString('en'),
    ),
    row('outbox inserts on the full tables, events per second (10 a transaction)', (r) =>
      Math.round(r.steadyRate).toLocaleString('en'),
    ),
    row('feed page (100 events), p50 / p99', (r) => `${ms(r.feed.p50)} / ${ms(r.feed.p99)}`),
    row('one delivery in full by id, p50 / p99', (r) => `${ms(r.detail.p50)} / ${ms(r.detail.p99)}`),
    row('purge of the oldest day', (r) => `${r.purgeSeconds.toFixed(2)} s, ${r.statements} statements`),
    row('events and deliveries of that day left', (r) => String(r.left)),
    row('events of the other days', (r) => r.kept.toLocaleString('en')),
    row('size of the three tables with indexes, before the purge', (r) => gb(r.sizeBefore)),
    row('after it (no vacuum since)', (r) => gb(r.sizeAfter)),
  ].join('\n');
  console.log(body);
  await writeSection('History in time partitions', body);
} finally {
  await server.destroy(); // its data folder too
}
