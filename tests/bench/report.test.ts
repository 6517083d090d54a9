import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { withSection } from '../../bench/report.ts';

// A bench rewrites its own section of docs/BENCHMARKS.md and keeps what was written by hand after the marker.
const test = suite('benchmark sections');

const MARK = '<!-- by hand: kept when the bench runs again -->';
const doc = [
  '# Benchmarks',
  '',
  '## One',
  '',
  'old figures of one',
  '',
  MARK,
  'what a person read in them',
  '',
  '## Two',
  '',
  'figures of two',
  '',
].join('\n');

test('a rerun replaces the figures and keeps the part by hand, and leaves the other sections alone', () => {
  const next = withSection(doc, 'One', 'new figures of one');
  assert.is(next, doc.replace('old figures of one', 'new figures of one'));
  assert.ok(
    next.includes(`${MARK}\nwhat a person read in them\n\n## Two`),
    'the part by hand, before the next section',
  );
});

test('a section without the marker is replaced whole; a new one is appended', () => {
  assert.is(withSection(doc, 'Two', 'new figures of two'), doc.replace('figures of two\n', 'new figures of two\n'));
  assert.ok(withSection(doc, 'Three', 'figures of three').endsWith('\n\n## Three\n\nfigures of three\n'));
});

test("every part of docs/BENCHMARKS.md written by hand follows its section's marker, so a rerun keeps it", () => {
  const document = readFileSync(new URL('../../docs/BENCHMARKS.md', import.meta.url), 'utf8');
  const lost = document
    .split('\n## ')
    .slice(1)
    .flatMap((section) => {
      const before = section.split(MARK)[0]!;
      return /written by hand/i.test(before) ? [section.slice(0, section.indexOf('\n'))] : [];
    });
  assert.equal(lost, [], 'sections whose part by hand a rerun would lose');
});

test.run();
