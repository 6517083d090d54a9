import { randomUUID } from 'node:crypto';
import * as assert from 'uvu/assert';
import type { Received } from './receiver.ts';

// The issue's reproduction of out-of-order webhooks: many UpdateCustomer commands on one order, sent a few at a time,
// so that the executor's batches hold several of the order's changes in one transaction; then the receiver's first
// receipts of the order's events are compared with the brand's feed (CONTRACT §7: they come in feed order).

/** Sends `count` UpdateCustomer commands on `orderId`, `atOnce` at a time; answers their _cids. */
export async function updateCustomerInRuns(
  post: (body: object) => Promise<number>,
  orderId: string,
  count = 40,
  atOnce = 8,
): Promise<string[]> {
  const cids = Array.from({ length: count }, () => randomUUID());
  for (let i = 0; i < count; i += atOnce) {
    const statuses = await Promise.all(
      cids
        .slice(i, i + atOnce)
        .map((cid, j) =>
          post({ _v: '1.0.0', _cid: cid, _type: 'UpdateCustomer', orderId, customer: { firstName: `n${i + j + 1}` } }),
        ),
    );
    assert.equal([...new Set(statuses)], [202], 'every command accepted');
  }
  return cids;
}

/** Every event of the caller's feed, oldest first, following `next` from the start. */
export async function wholeFeed(
  get: (path: string) => Promise<{ items: Record<string, unknown>[]; next: string | null }>,
) {
  const events: Record<string, unknown>[] = [];
  for (let after: string | null = null; ; ) {
    const page = await get(`/v3/events?limit=500${after ? `&after=${encodeURIComponent(after)}` : ''}`);
    events.push(...page.items);
    if (!page.next || page.items.length === 0) return events;
    after = page.next;
  }
}

/**
 * The order's OrderStatusEvents as the receiver first got them, against the feed: the same _eids in the same order. On
 * a failure, the inverted pairs and the receiver's last states name what went wrong.
 */
export function assertFirstReceiptsInFeedOrder(
  received: readonly Received[],
  feed: readonly Record<string, unknown>[],
  orderId: string,
) {
  const ofOrder = (p: Record<string, unknown>) => p._type === 'OrderStatusEvent' && p.orderId === orderId;
  const firsts: string[] = [];
  for (const r of received)
    if (ofOrder(r.payload) && !firsts.includes(String(r.payload._eid))) firsts.push(String(r.payload._eid));
  const inFeed = feed.filter(ofOrder).map((p) => String(p._eid));
  const name = new Map([
    ...received.map(
      (r) => [String(r.payload._eid), (r.payload.customer as { firstName?: string } | null)?.firstName] as const,
    ),
  ]);
  const inverted = firsts.filter((eid, i) => i > 0 && inFeed.indexOf(eid) < inFeed.indexOf(firsts[i - 1]!)).length;
  assert.is(firsts.length, inFeed.length, 'every event of the order received');
  assert.equal(
    firsts.map((e) => name.get(e)),
    inFeed.map((e) => name.get(e)),
    `first receipts in feed order (${inverted} inverted)`,
  );
}
