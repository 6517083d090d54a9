// The service's side of bench/events-feed: one reader draining the event feed over HTTP (GET /v3/events) page by page,
// timed, while the steady writes go on; and what a drain, or the bare reader (bench/bare-feed.ts), measured.
import http from 'node:http';
import { percentile } from './report.ts';

type FeedAnswer = { items: { _eid: string }[]; next: string | null };
export type Drain = {
  items: number;
  pages: number;
  seconds: number;
  p50: number;
  p99: number;
  kb: number;
  backlogOnce: number;
  duplicates: number;
  steadyWritten: number;
  steadyInDrain: number;
  steadyAtEnd: number;
  writeFailures: number;
};
export type Bare = { read: number; pages: number; seconds: number; p50: number; p99: number };

/**
 * What the reader needs of the bench: its access token, its page size and warm-up, the steady writes, the backlog's
 * ids.
 */
export function feedReader({
  token,
  LIMIT,
  WARM_UP_SECONDS,
  writer,
  backlogIds,
}: {
  token: string;
  LIMIT: number;
  WARM_UP_SECONDS: number;
  backlogIds: Set<string>;
  writer: (round: number) => { written: Set<string>; stop(): Promise<{ written: Set<string>; failures: number }> };
}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const getPage = (port: number, after: string | null) =>
    new Promise<{ page: FeedAnswer; ms: number; bytes: number }>((resolve, reject) => {
      const begun = performance.now();
      const path = `/v3/events?limit=${LIMIT}${after ? `&after=${encodeURIComponent(after)}` : ''}`;
      const req = http.request(
        { host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${token}` } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => {
            const ms = performance.now() - begun;
            const body = Buffer.concat(chunks);
            if (res.statusCode !== 200) {
              reject(new Error(`GET ${path} answered ${res.statusCode}: ${body.toString().slice(0, 500)}`));
              return;
            }
            resolve({ page: JSON.parse(body.toString('utf8')) as FeedAnswer, ms, bytes: body.length });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
  async function drainService(port: number, round: number): Promise<Drain> {
    // Warm-up in the measured process, reading the feed as the drain will: what is timed next runs compiled code.
    let after: string | null = null;
    for (const until = performance.now() + WARM_UP_SECONDS * 1000; performance.now() < until; ) {
      const { page } = await getPage(port, after);
      after = page.items.length < LIMIT ? null : page.next;
    }

    const steady = writer(round);
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the writes are under way before the reader starts
    const seen = new Map<string, number>();
    const take = (page: FeedAnswer) => {
      for (const item of page.items) seen.set(item._eid, (seen.get(item._eid) ?? 0) + 1);
    };
    const pageMs: number[] = [];
    let items = 0;
    let bytes = 0;
    after = null;
    // The timed loop reads each page's events as the bare reader does (each one's _eid); which ids came how often is
    // counted after it, as the bare reader counts nothing of the kind.
    const pages: FeedAnswer[] = [];
    const begun = performance.now();
    for (;;) {
      const { page, ms, bytes: b } = await getPage(port, after);
      pageMs.push(ms);
      bytes += b;
      for (const item of page.items) if (item._eid) items++;
      pages.push(page);
      after = page.next;
      if (page.items.length < LIMIT) break;
    }
    const seconds = (performance.now() - begun) / 1000;
    for (const page of pages) take(page);
    const steadyInDrain = [...steady.written].filter((id) => seen.has(id)).length;
    // Then the writes stop, and the reader reads on to the end (not timed): every write must arrive, once.
    const { written, failures } = await steady.stop();
    for (;;) {
      const { page } = await getPage(port, after);
      take(page);
      after = page.next;
      if (page.items.length === 0) break;
    }
    return {
      items,
      pages: pageMs.length,
      seconds,
      p50: percentile(pageMs, 0.5),
      p99: percentile(pageMs, 0.99),
      kb: bytes / pageMs.length / 1024,
      backlogOnce: [...backlogIds].filter((id) => seen.get(id) === 1).length,
      duplicates: [...seen.values()].filter((n) => n > 1).length,
      steadyWritten: written.size,
      steadyInDrain,
      steadyAtEnd: [...written].filter((id) => seen.get(id) === 1).length,
      writeFailures: failures,
    };
  }
  return { agent, drainService };
}
