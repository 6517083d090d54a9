import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EXAMPLE_EVENT_TYPES, renderExampleEvent } from '../../domain/example-events.ts';
import { PAYLOAD_VERSIONS, TRANSFORMERS } from '../../domain/webhook-config.ts';

// The example events of POST /v3/webhook-config/test, one per type × transformer × version, as golden snapshots
// (tests/golden/example-events.json): a change to a payload's shape shows here as a diff to review. UPDATE_GOLDEN=1
// writes the file anew. Their validity against the OpenAPI document is tested on the real app
// (tests/http/example-events.test.ts).
const test = suite('example events: golden snapshots');
const GOLDEN = join(import.meta.dirname, '..', 'golden', 'example-events.json');
const NOW = new Date('2026-11-27T10:00:00.000Z');
const exampleKey = (type: string, transformer: string, version: string) => `${type} ${transformer} ${version}`;

const rendered = () =>
  Object.fromEntries(
    EXAMPLE_EVENT_TYPES.flatMap((type) =>
      TRANSFORMERS.flatMap((transformer) =>
        PAYLOAD_VERSIONS.map((version) => [
          exampleKey(type, transformer, version),
          renderExampleEvent(type, { transformer, version }, 'example-eid', NOW),
        ]),
      ),
    ),
  );

test('every type in every transformer and version renders as its golden snapshot', () => {
  const now = rendered();
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(GOLDEN, `${JSON.stringify(now, null, 2)}\n`);
  const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, unknown>;
  assert.equal(Object.keys(golden).sort(), Object.keys(now).sort(), 'one snapshot per type × transformer × version');
  for (const key of Object.keys(now))
    assert.equal(JSON.stringify(now[key]), JSON.stringify(golden[key]), `${key} (key order included)`);
  assert.is(Object.keys(now).length, 5 * 2 * 3);
});

test('each example is of its type, in the version asked for, with the event id given; a later version only adds members', () => {
  const all = rendered();
  for (const type of EXAMPLE_EVENT_TYPES) {
    for (const transformer of TRANSFORMERS) {
      const members = PAYLOAD_VERSIONS.map((version) => {
        const event = all[exampleKey(type, transformer, version)] as Record<string, unknown>;
        assert.equal([event._type, event._v, event._eid], [type, version, 'example-eid']);
        return Object.keys(event);
      });
      for (let i = 1; i < members.length; i++)
        assert.equal(
          members[i]!.slice(0, members[i - 1]!.length),
          members[i - 1],
          `${type} ${transformer}: ${PAYLOAD_VERSIONS[i]} keeps ${PAYLOAD_VERSIONS[i - 1]}'s members`,
        );
    }
  }
  const order = (transformer: 'default' | 'partner-format') =>
    all[exampleKey('OrderStatusEvent', transformer, '1.3.0')] as Record<string, unknown>;
  assert.ok(
    Object.entries(order('default')).every(([, value]) => value !== null),
    'an example order has every value set',
  );
  assert.ok(Object.entries(order('partner-format')).every(([, value]) => value !== null));
});

test.run();
