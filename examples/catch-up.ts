// Catching up after an outage with the event feed: follow `next` from where you stopped until a page comes back empty.

export interface FeedPage {
  items: Record<string, unknown>[];
  next: string | null;
}

/**
 * Reads every event after `cursor` (null: from the oldest retained one), hands each to `handle` in order, and answers
 * the cursor to keep for next time. Store the cursor only after the events before it are handled: the feed serves each
 * event once per cursor, and a crash between handling and storing repeats a page, never skips one (deduplicate on `_eid`,
 * as for deliveries). A 410 means the cursor is older than the retention window (what follows it may be purged): this
 * starts again from the oldest retained event, and what was handled before comes again (deduplicated on `_eid`).
 */
export async function catchUp(
  baseUrl: string,
  accessToken: string,
  cursor: string | null,
  handle: (event: Record<string, unknown>) => Promise<void>,
): Promise<string | null> {
  for (;;) {
    const url = new URL('v3/events', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`); // keeps a path the base URL has
    url.searchParams.set('limit', '500');
    if (cursor) url.searchParams.set('after', cursor);
    const res = await fetch(url, { headers: { authorization: `Bearer ${accessToken}` } });
    if (res.status === 410 && cursor) {
      cursor = null;
      continue;
    }
    if (!res.ok) throw new Error(`GET /v3/events answered ${res.status}: ${await res.text()}`);
    const page = (await res.json()) as FeedPage;
    for (const event of page.items) await handle(event);
    cursor = page.next ?? cursor;
    if (page.items.length === 0) return cursor;
  }
}
