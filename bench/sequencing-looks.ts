// npm run bench:sequencing-looks — what one sequencing round costs as positioned events pile up between vacuums of the
// history: positioning an event leaves its entry in the partial index of the events that wait for a position (a
// round's way in) dead until the day's partition is vacuumed, once a fifth of it is dead. On a PostgreSQL server of
// the bench's own with autovacuum off. For each count of events positioned since the last vacuum (BENCH_DEAD,
// cumulative): BENCH_LOOKS looks of each kind, each after a writer's statement of 5 new events: the sequencer's own
// round (`sequence_round`, the planner's defaults) and the delivery claim's (`sequence_round_waiting` with bitmap scans
// off, as claim_deliveries_v3 runs it), timed by the client on a session of their own; then the same after
// `vacuum events`. Writes its section of docs/BENCHMARKS.md.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startTempPostgres, type TempPostgres } from '../tests/support/temp-postgres.ts';
import { codeLine, median, percentile, writeSection } from './report.ts';
import { migratedDatabase, timed } from './temp-database.ts';

const DEAD = (process.env.BENCH_DEAD ?? '0,100000,400000,800000').split(',').map(Number);
const LOOKS = Number(process.env.BENCH_LOOKS ?? 200);

const WRITE = `insert into events (id, account_id, scope, type, order_id, payload, endpoint_id, created_at)
  select gen_random_uuid(), $1, 'brand', 'OrderStatusEvent', 'o-' || n,
    json_build_object('n', n, 'pad', repeat('x', 700)), $2, now()
  from generate_series(1, $3::int) n`;

interface Looks {
  round: number[];
  claim: number[];
}
interface Stage {
  /** Events positioned since the last vacuum when the stage's looks began (they add LOOKS × 10 more). */
  dead: number;
  looks: Looks;
}

async function measure(server: TempPostgres) {
  const url = await migratedDatabase(server, 'sequencing_looks');
  const writer = new pg.Client({ connectionString: url });
  const sequencer = new pg.Client({ connectionString: url });
  const claimer = new pg.Client({ connectionString: url });
  for (const client of [writer, sequencer, claimer]) await client.connect();
  await claimer.query('set enable_bitmapscan = off');
  const [accountId, endpointId] = [randomUUID(), randomUUID()];
  const write = (n: number) => writer.query(WRITE, [accountId, endpointId, n]);
  const round = (client: pg.Client, fn: string) => client.query(`select ${fn}(1000) as n`);
  const stages: Stage[] = [];
  const writes: number[] = [];
  const positionings: number[] = [];
  let positioned = 0;
  const looks = async (): Promise<Looks> => {
    const result: Looks = { round: [], claim: [] };
    for (let i = 0; i < LOOKS; i++) {
      await write(5);
      result.round.push(await timed(() => round(sequencer, 'sequence_round')));
      await write(5);
      result.claim.push(await timed(() => round(claimer, 'sequence_round_waiting')));
    }
    positioned += LOOKS * 10;
    return result;
  };
  try {
    for (const dead of DEAD) {
      while (positioned < dead) {
        writes.push(await timed(() => write(1000)));
        positionings.push(await timed(() => round(sequencer, 'sequence_round_waiting')));
        positioned += 1000;
      }
      stages.push({ dead: positioned, looks: await looks() });
    }
    // What autovacuum does once a fifth of the day's partition is dead.
    await writer.query('vacuum events');
    const afterVacuum = await looks();
    return { stages, afterVacuum, writeMs: median(writes), positionMs: median(positionings) };
  } finally {
    for (const client of [writer, sequencer, claimer]) await client.end().catch(() => {});
  }
}

const server = await startTempPostgres({ shared_buffers: '512MB', autovacuum: 'off' });
process.once('exit', () => server.destroySync());
process.once('SIGINT', () => process.exit(130));
try {
  const result = await measure(server);
  const ms = (xs: number[]) => `${median(xs).toFixed(2)} / ${percentile(xs, 0.99).toFixed(2)}`;
  const row = (label: string, l: Looks) =>
    `| ${label} | ${ms(l.round)} | ${ms(l.claim)} | ${l.round[0]!.toFixed(2)} / ${l.claim[0]!.toFixed(2)} |`;
  const body = [
    `${codeLine()} \`npm run bench:sequencing-looks\` (BENCH_DEAD=${DEAD.join(',')}, BENCH_LOOKS=${LOOKS}), ` +
      `${new Date().toISOString().slice(0, 10)}: on a PostgreSQL server of the bench's own (shared_buffers 512 MB, ` +
      "autovacuum off). One endpoint's events of about 750 B, written 1,000 a statement and positioned 1,000 a " +
      `round until the count below had been positioned since the last vacuum; then ${LOOKS} looks of each kind, ` +
      "each after a statement writing 5 new events: the sequencer's own round (`sequence_round`, the planner's " +
      "defaults) and the delivery claim's (`sequence_round_waiting` with bitmap scans off, as claim_deliveries_v3 " +
      'runs it), each on a session of its own, timed by the client on 127.0.0.1 (ms, p50 / p99).',
    '',
    "| positioned since the last vacuum | sequencer's round | claim's round | the stage's first look of each |",
    '|---:|---:|---:|---:|',
    ...result.stages.map((s) => row(s.dead.toLocaleString('en'), s.looks)),
    row('then `vacuum events`', result.afterVacuum),
    '',
    `Writing 1,000 events in one statement: ${result.writeMs.toFixed(1)} ms (median); positioning them, ` +
      `${result.positionMs.toFixed(1)} ms.`,
  ].join('\n');
  console.log(body);
  await writeSection('Sequencing rounds as positioned events pile up', body);
} finally {
  await server.destroy();
}
