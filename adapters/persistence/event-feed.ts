import type { EntityManager } from '@mikro-orm/postgresql';
import type { EventFeed, FeedEntry, FeedRead } from '../../domain/ports.ts';
import { type ReadOn, withDriverConnection } from './driver.ts';

/*
 * Why the feed does not page by `events.seq`: an identity value is taken when a row is inserted, not when its
 * transaction commits. A writer that inserts seq 10 and commits late lets a reader see 11 first; a reader that
 * remembers "after 11" never sees 10. So events get a second number, their feed position, once they have committed:
 *
 * - One sequencer at a time (a transaction-scoped advisory lock; a worker's round that finds it taken does nothing, a
 *   reader's waits for it) gives the committed events that have none their positions from a sequence, in `seq` order,
 *   and commits them all at once. The delivery claim runs a round too, under the same lock (it waits for it):
 *   deliveries are sent in feed order.
 * - A round sees only events committed before its statement began; an event committing later gets its position in a
 *   later round, and every later round draws larger numbers (it starts after the previous round committed). So
 *   positions grow in the order events became visible, and a reader that has seen position p has seen every position
 *   below p that will ever exist: nothing is filled in behind it.
 * - Within a round, `seq` order is commit order wherever order matters: changes to one order hold the job's row lock
 *   and write their events last, so a later change of that order inserts (and commits) after the earlier committed.
 *
 * Readers page by (endpoint, position) on an index, and only ever see committed positions. Nothing here depends on
 * the server: the embedded database runs the same statements.
 *
 * The lock and the numbering must stay two statements of one transaction: the numbering's snapshot has to be taken
 * after the lock is held (after the previous round committed). In one SQL statement, or outside a transaction, a round
 * could work from a snapshot older than the last round's commit and number an event twice. They are two statements of
 * one plpgsql function (sequence_round), called as one: each of its statements takes its own snapshot.
 */
// The sequencer's advisory lock is the key 0x70626931 ('pbi1'), taken in SQL only (the migrations' functions).

// sequence_events (migration 20261129100000) positions up to $1 events in seq order and puts the pending deliveries of
// those events in the sender's queue, with their positions; sequence_round (migration 20261129130000) runs it under the
// lock when the lock is free. The delivery claim runs the same round under the same lock.

// A page and, read in the same statement (one snapshot, one round trip), the endpoint's purge horizon: one row with
// no event when the page is empty. Times in epoch milliseconds (what a cursor holds): parsing a timestamp's text for
// each of up to 500 events cost more than the rest of the page's own work here. The rows come in the lateral's order
// (one outer row) and are not sorted again: a second sort of the page cost a quarter of its time on the server
// (docs/BENCHMARKS.md, the event feed); pageEntries checks the order.
const page = (orderFilter: string) => `
  select e.position, e.created_ms, e.payload, h.purged
  from (select coalesce(max(position), 0) as purged from event_feed_purged where endpoint_id = $1) h
  left join lateral (
    select position, floor(extract(epoch from created_at) * 1000)::int8 as created_ms, payload::text as payload
    from events
    where endpoint_id = $1${orderFilter} and position > $2 and position is not null
    order by position limit $3) e on true`;
const PAGE = page('');
// One order's, from the index of orders (the same order, the same rules).
const ORDER_PAGE = page(' and order_id = $4');

export class SqlEventFeed implements EventFeed {
  constructor(
    private readonly em: EntityManager,
    private readonly reads: ReadOn = withDriverConnection,
  ) {}

  /**
   * A round in one statement (sequence_round, migration 20261129130000): its own transaction, which holds the advisory
   * lock and commits the positions; or the unit's transaction when it runs in one.
   */
  async sequence(limit: number, waitForRound = false): Promise<number> {
    const {
      rows: [round],
    } = await withDriverConnection(this.em, (client) =>
      client.query<{ n: number }>(
        waitForRound
          ? { name: 'feed-sequence-round-waiting', text: 'select sequence_round_waiting($1) as n', values: [limit] }
          : { name: 'feed-sequence-round', text: 'select sequence_round($1) as n', values: [limit] },
      ),
    );
    return round!.n;
  }

  page(endpointId: string, afterPosition: number, limit: number, orderId?: string): Promise<FeedRead> {
    return this.reads(this.em, async (client) => {
      const { rows } = await client.query<{
        position: string | null;
        created_ms: string;
        payload: string;
        purged: string;
      }>({
        ...(orderId === undefined
          ? { name: 'feed-page-with-horizon-v2', text: PAGE, values: [endpointId, afterPosition, limit] }
          : {
              name: 'feed-order-page-with-horizon-v2',
              text: ORDER_PAGE,
              values: [endpointId, afterPosition, limit, orderId],
            }),
      });
      return { entries: pageEntries(rows), purgedThrough: Number(rows[0]?.purged ?? 0) };
    });
  }
}

/** The page's events, oldest first: as the rows came, unless a plan changed their order. */
function pageEntries(rows: { position: string | null; created_ms: string; payload: string }[]): FeedEntry[] {
  const entries: FeedEntry[] = [];
  let ordered = true;
  for (const r of rows) {
    if (r.position === null) continue;
    const position = Number(r.position);
    if (entries.length > 0 && position <= entries.at(-1)!.position) ordered = false;
    entries.push({ position, createdAt: new Date(Number(r.created_ms)), payload: r.payload });
  }
  return ordered ? entries : entries.sort((a, b) => a.position - b.position);
}
