import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pageBytes } from '../../server/http/events-feed.ts';

// The feed page's bytes (server/http/events-feed.ts), written event by event: byte for byte what one string of the
// whole page would encode to, whatever the events' text holds.
const test = suite('the feed page as bytes');

const asOneString = (items: string[], next: unknown) =>
  Buffer.from(`{"items":[${items.join(',')}],"next":${JSON.stringify(next)}}`);

test('the same bytes as the page written as one string: ASCII, Latin-1, past it, lone surrogates, empty', () => {
  const texts = [
    '{"a":"plain"}',
    '{"street":"Hauptstraße","name":"Müller"}',
    '{"note":"— 🚀 €"}',
    '{"lone":"\udc00 and \ud800"}',
    `{"big":"${'x'.repeat(70_000)}ß"}`,
  ];
  for (const items of [[], texts.slice(0, 1), texts, [...texts, ...texts]])
    for (const next of [null, 'eyJhIjoxfQ'])
      assert.ok(pageBytes(items, next).equals(asOneString(items, next)), `${items.length} events, next ${next}`);
  assert.is(pageBytes([], null).toString(), '{"items":[],"next":null}');
});

test.run();
