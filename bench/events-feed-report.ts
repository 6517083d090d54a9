// The section bench/events-feed writes in docs/BENCHMARKS.md, from what it measured, and the line it ends with.
import type { Bare, Drain } from './events-feed-reader.ts';
import { median, writeSection } from './report.ts';

/** The bench's settings, and what it measured: the sequencing of the backlog, then the drains of each round. */
export interface EventsFeedRun {
  ROUNDS: number;
  BACKLOG: number;
  RATE: number;
  LIMIT: number;
  WARM_UP_SECONDS: number;
  TARGET: number;
  server: { version: string; autovacuum: string } | undefined;
  payloadBytes: number;
  seqSamples: { s: number; left: number }[];
  seqSeconds: number;
  firstMoved: number;
  seqRate: number;
  drains: Drain[];
  bares: Bare[];
}

export async function writeEventsFeedSection({
  ROUNDS,
  BACKLOG,
  RATE,
  LIMIT,
  WARM_UP_SECONDS,
  TARGET,
  server,
  payloadBytes,
  seqSamples,
  seqSeconds,
  firstMoved,
  seqRate,
  drains,
  bares,
}: EventsFeedRun) {
  const rate = median(drains.map((d) => d.items / d.seconds));
  const bareRate = median(bares.map((b) => b.read / b.seconds));
  const ratio = median(drains.map((d, i) => d.items / d.seconds / (bares[i]!.read / bares[i]!.seconds)));
  const allOnce = drains.every(
    (d) => d.backlogOnce === BACKLOG && d.duplicates === 0 && d.steadyAtEnd === d.steadyWritten,
  );
  const met = rate >= TARGET;
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const curve = [0.25, 0.5, 0.75]
    .map((f) => seqSamples.find((x) => x.left <= BACKLOG * (1 - f)))
    .filter(Boolean)
    .map((x) => `${fmt(BACKLOG - x!.left)} after ${x!.s.toFixed(1)} s`)
    .join(', ');

  await writeSection(
    'Event feed: draining a backlog',
    `
Command: \`DATABASE_URL=… npm run bench:events-feed\` (${new Date().toISOString().slice(0, 10)}; ${ROUNDS} rounds, interleaved, the service in a
fresh process each round; PostgreSQL ${server!.version.split(' ')[0]}, autovacuum ${server!.autovacuum}: the bench vacuums where autovacuum would).

Backlog: ${fmt(BACKLOG)} OrderStatusEvents (\`default\` transformer, 1.3.0, every field of renderOrderStatus, one product, no billing
address or documents; ${payloadBytes} B of JSON each on average) of one brand's endpoint (its \`brand\` configuration, without a URL:
nothing is delivered), inserted with SQL as the service's outbox writes them (unnest of arrays, 10,000 a statement) while the
service was stopped, then \`vacuum analyze\`. They had no feed positions: the service (\`server/main.ts\` built, as \`npm start\` runs it, \`SERVICE_ROLE=all\`, pinned to CPU 0) was
started and its background sequencer (rounds of 1,000, back to back while they fill) positioned all ${fmt(BACKLOG)} in
**${seqSeconds.toFixed(1)} s** after it listened (the first after ${firstMoved.toFixed(1)} s; ${curve}; unpositioned count taken every
250 ms): **${fmt(seqRate)} events/s**. That process was then stopped; the drains began only after that and another \`vacuum analyze\`
(the sequencer's updates leave a dead version of every row): they measure reading.

Drain: one reader (this process, pinned to CPU 1; node:http, one kept-alive connection, the brand's access token) follows
\`GET /v3/events?limit=${LIMIT}\` from the start, passing \`next\` as \`after\` and parsing every page, until a page has fewer than
${LIMIT} items; after ${WARM_UP_SECONDS} s of untimed warm-up reads in the same process. Meanwhile ${RATE} events/s of the endpoint are inserted
(open loop, one autocommit INSERT each, from a pool in this process), from 1 s before the drain; the service's sequencer
positions them as they commit (a GET whose page comes back short runs a round itself, then reads on). The writes stop
then, and the reader reads on to an empty page, untimed.
Peer: \`bench/bare-feed.ts\` compiled by tsc, one pg client pinned to CPU 0, no HTTP, auth or sequencing: \`select
position, payload::text from events where endpoint_id = $1 and position > $2 order by position limit ${LIMIT}\` and JSON.parse of
every payload, from the start to the end, with the same ${RATE} events/s being written (unpositioned: no sequencer runs then).

Page latency is from the request to the last byte of the answer (the reader's own parse of the page comes after it).

| round | reader | events | seconds | events/s | pages | page p50 / p99 ms |
|---:|---|---:|---:|---:|---:|---:|
${drains
  .map(
    (
      d,
      i,
    ) => `| ${i + 1} | service | ${d.items} | ${d.seconds.toFixed(2)} | ${fmt(d.items / d.seconds)} | ${d.pages} | ${d.p50.toFixed(1)} / ${d.p99.toFixed(1)} |
| ${i + 1} | bare pg | ${bares[i]!.read} | ${bares[i]!.seconds.toFixed(2)} | ${fmt(bares[i]!.read / bares[i]!.seconds)} | ${bares[i]!.pages} | ${bares[i]!.p50.toFixed(1)} / ${bares[i]!.p99.toFixed(1)} |`,
  )
  .join('\n')}

Service / bare: **${ratio.toFixed(2)}×** (median of the rounds); a service page is ${drains[0]!.kb.toFixed(0)} KB.

Completeness, each round: ${drains
      .map(
        (d, i) =>
          `round ${i + 1}: every backlog event received exactly once ${d.backlogOnce === BACKLOG ? 'yes' : `no (${d.backlogOnce} of ${BACKLOG})`}, ` +
          `duplicates ${d.duplicates}, concurrent writes received ${d.steadyAtEnd} of ${d.steadyWritten} (${d.steadyInDrain} already within the timed drain), write failures ${d.writeFailures}`,
      )
      .join('; ')}.

Target: ≥ ${fmt(TARGET)} events/s drained by one reader: **${fmt(rate)} events/s**, ${met ? 'met' : 'not met'}.
`,
  );
  console.log(
    `events-feed: service ${fmt(rate)} events/s (target ≥ ${fmt(TARGET)}: ${met ? 'met' : 'not met'}), bare ${fmt(bareRate)} events/s, ` +
      `ratio ${ratio.toFixed(2)}×, sequencing ${fmt(BACKLOG)} in ${seqSeconds.toFixed(1)} s, every event once: ${allOnce ? 'yes' : 'NO'}`,
  );
  console.log('written to docs/BENCHMARKS.md');
}
