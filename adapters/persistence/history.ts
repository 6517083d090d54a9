import type pg from 'pg';

// The history (`events`, `deliveries`, `delivery_attempts`) is partitioned by the event's time, a UTC day a partition
// (migrations 20261130000000 and 20261130010000). A delivery and its attempts carry their event's time: each read by
// key names it too, or it would look into every partition.

/** A delivery's event, in its day's partition. */
export const ITS_EVENT = 'e.id = d.event_id and e.created_at = d.created_at';
/**
 * A delivery's attempts, in its day's partition; an attempt logged before the history was partitioned is dated
 * -infinity (in the legacy partition).
 */
export const ITS_ATTEMPTS = "a.delivery_id = d.id and a.created_at in (d.created_at, '-infinity')";

/** How many days of partitions are made ahead of the service's clock. */
const DAYS_AHEAD = 3;

/** The partitions of the days after from's, those not made yet. */
export async function prepareHistoryDays(client: pg.PoolClient, from: Date): Promise<void> {
  await client.query({
    name: 'history-days-ahead',
    text: 'select history_partitions_ahead($1, $2)',
    values: [from, DAYS_AHEAD],
  });
}

/**
 * First the deliveries past the horizon's day of endpoints disabled or without a URL, which nothing else ends. Then a
 * whole day: drop_history_days drops the oldest day that ended before `before` and has nothing left to send,
 * with its feed horizon moved (a dropped day answers `limit`: the caller comes back for the next). Then, row by row,
 * what no day can take, older than `before`'s UTC day (a day on its way past the horizon is left whole for its drop):
 * the default partitions, the legacy partition, a day still sending. Finished deliveries there go first, each under a
 * row lock (a redelivery committing meanwhile makes its delivery pending, and the lock's re-check then keeps it) with
 * their attempts, then the old events left without any delivery. Answers the larger count of rows. A drop that found
 * its tables busy (-1) leaves the rows too: they wait for the next round.
 */
export async function purgeHistoryBefore(client: pg.PoolClient, before: Date, limit: number): Promise<number> {
  const dayOf = new Date(Date.UTC(before.getUTCFullYear(), before.getUTCMonth(), before.getUTCDate()));
  // What an endpoint disabled or without a URL has waiting is kept as it is (CONTRACT §11), but no longer than the
  // history (§10): past the horizon it goes, out of the queue first, so that its day can be dropped. A lease that
  // ended before the horizon's day is surely over.
  const paused = await client.query<{ n: number }>({
    name: 'paused-deliveries-purge',
    text: `with gone as (
        delete from delivery_queue where delivery_id in (
          select q.delivery_id from delivery_queue q
          where q.created_at < $1 and (q.lease_until is null or q.lease_until < $1)
            and exists (select 1 from webhook_configs w where w.id = q.endpoint_id
              and not (w.enabled and coalesce(w.url, '') <> ''))
          limit $2 for update of q skip locked)
        returning delivery_id, created_at),
      purged as (
        delete from deliveries d using gone g where d.id = g.delivery_id and d.created_at = g.created_at
        returning d.id, d.created_at),
      attempts as (
        delete from delivery_attempts a using purged d where ${ITS_ATTEMPTS})
      select count(*)::int as n from gone`,
    values: [dayOf, limit],
  });
  if (paused.rows[0]!.n === limit) return limit;
  const { rows } = await client.query<{ n: number }>({
    name: 'history-drop-day',
    text: 'select drop_history_days($1) as n',
    values: [before],
  });
  if (rows[0]!.n !== 0) return rows[0]!.n > 0 ? limit : 0;
  const deliveries = await client.query<{ n: number }>({
    name: 'deliveries-purge-v2',
    text: `with purged as (
        delete from deliveries where (id, created_at) in (
          select d.id, d.created_at from deliveries d where d.created_at < $1 and d.status <> 'pending'
          order by d.created_at limit $2 for update of d skip locked)
        returning id, created_at),
      attempts as (
        delete from delivery_attempts a using purged d where ${ITS_ATTEMPTS})
      select count(*)::int as n from purged`,
    values: [dayOf, limit],
  });
  // Each endpoint's purge horizon moves with what is deleted, in the same statement: the feed answers 410 for a cursor
  // that an event after it was purged from (event-feed.ts).
  const events = await client.query<{ n: number }>({
    name: 'events-purge-v2',
    text: `with purged as (
        delete from events where (id, created_at) in (
          select e.id, e.created_at from events e where e.created_at < $1
            and not exists (select 1 from deliveries d where ${ITS_EVENT})
          order by e.created_at limit $2)
        returning endpoint_id, position),
      horizon as (
        insert into event_feed_purged (endpoint_id, position)
        select endpoint_id, max(position) from purged where endpoint_id is not null and position is not null
        group by endpoint_id
        on conflict (endpoint_id) do update set position = greatest(event_feed_purged.position, excluded.position))
      select count(*)::int as n from purged`,
    values: [dayOf, limit],
  });
  return Math.max(deliveries.rows[0]!.n, events.rows[0]!.n);
}
