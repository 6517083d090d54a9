// npx tsx bench/feed-page-bytes.ts — CPU of writing one feed page (500 events of about 850 B) as bytes: the page's
// texts joined into one string and encoded whole, against each event encoded on its own and the bytes concatenated
// (server/http/events-feed.ts's pageBytes), for events of ASCII only, with an `ß`, and with a `€`. Medians of 5 runs of
// 100 pages, after 30 of warm-up.
import { pageBytes } from '../server/http/events-feed.ts';

const events = (char: string) =>
  Array.from({ length: 500 }, (_, n) => JSON.stringify({ text: 'x'.repeat(800), n, street: `Hauptstra${char}e` }));

function msPerPage(write: () => Buffer): string {
  for (let i = 0; i < 30; i++) write();
  const runs: number[] = [];
  for (let run = 0; run < 5; run++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < 100; i++) write();
    runs.push(Number(process.hrtime.bigint() - started) / 1e8);
  }
  return runs.sort((a, b) => a - b)[2]!.toFixed(2);
}

for (const [name, char] of [
  ['ASCII only', 's'],
  ['with ß (Latin-1)', 'ß'],
  ['with € (past Latin-1)', '€'],
] as const) {
  const items = events(char);
  const joined = msPerPage(() => Buffer.from(`{"items":[${items.join(',')}],"next":null}`));
  const each = msPerPage(() => pageBytes(items, null));
  console.log(`${name}: joined then encoded ${joined} ms a page, each event encoded ${each} ms`);
}
