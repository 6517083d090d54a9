import * as assert from 'uvu/assert';
import type { Arrival } from './receiver.ts';
import { resultEventsPerCid, type Sql, sleep } from './support.ts';

// What the host fault tests (host-sigkill, host-partition) check once the load is over.

/** Each accepted command ran exactly once: one CommandResultEvent per _cid. */
export async function assertRanOnce(sql: Sql, accountId: string, cids: readonly string[]) {
  const results = await resultEventsPerCid(sql, accountId);
  assert.equal(
    cids.filter((cid) => results.get(cid) !== 1).map((cid) => `${cid}: ${results.get(cid) ?? 0}`),
    [],
    'each accepted command ran exactly once',
  );
}

/** The account's events in feed order, once the sequencer has given every one of them its position. */
export async function eventsInFeedOrder(sql: Sql, accountId: string) {
  for (const deadline = Date.now() + 10_000; ; await sleep(100)) {
    const [left] = await sql<{ n: number }>(
      'select count(*)::int as n from events where account_id = $1 and position is null',
      [accountId],
    );
    if (left!.n === 0) break;
    assert.ok(Date.now() < deadline, `${left!.n} events without a feed position`);
  }
  return sql<{ id: string; order_id: string | null }>(
    'select id::text as id, order_id from events where account_id = $1 order by position',
    [accountId],
  );
}

/** Each order's events were first received in feed order. */
export function assertFirstReceiptsInFeedOrder(
  events: readonly { id: string; order_id: string | null }[],
  arrivals: readonly Arrival[],
) {
  const firstAt = new Map<string, number>();
  for (const a of arrivals) if (!firstAt.has(a.id)) firstAt.set(a.id, a.at);
  const inversions: string[] = [];
  const lastOfOrder = new Map<string, { id: string; at: number }>();
  for (const e of events) {
    if (e.order_id === null) continue;
    const at = firstAt.get(e.id)!;
    const before = lastOfOrder.get(e.order_id);
    if (before && before.at > at) inversions.push(`${e.order_id}: ${before.id} after ${e.id}`);
    lastOfOrder.set(e.order_id, { id: e.id, at });
  }
  assert.equal(inversions, [], "each order's events first received in feed order");
}
