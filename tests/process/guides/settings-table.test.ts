import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { operators, read } from './support.ts';

// docs/operators.md: its settings table names exactly the settings server/config.ts reads, with their ranges and
// defaults (the kinds of value are in server/config-values.ts).
const test = suite('the operators guide: the settings table');

/** The members of config.ts's zod object for the environment, each with the source of its schema. */
function envSchema(): Map<string, string> {
  const body = /const envSchema = z\.object\(\{\n([\s\S]*?)\n\}\);/.exec(read('server/config.ts'))?.[1];
  assert.ok(body, 'no envSchema in server/config.ts');
  return new Map([...body.matchAll(/^ {2}([A-Z][A-Z0-9_]*): (.+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

function section(doc: string, heading: string): string {
  const start = doc.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `no "## ${heading}" section`);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

interface SettingRow {
  names: string[];
  text: string;
  meaning: string;
  fallback: string;
}

function settingsTable(): SettingRow[] {
  const rows = section(operators, 'Settings')
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2);
  return rows.map((row) => {
    const cells = row
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim());
    assert.is(cells.length, 3, `a row of the settings table has ${cells.length} cells: ${row}`);
    const plain = (s: string) => s.replaceAll('`', '');
    return {
      names: [...cells[0]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!),
      text: plain(row),
      meaning: plain(cells[1]!),
      fallback: plain(cells[2]!),
    };
  });
}

const number = (source: string) => source.replaceAll('_', '');
const mentions = (text: string, value: string) =>
  new RegExp(`(^|[^\\w.])${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^\\w]|$)`).test(text);

test('the settings table names every setting config.ts reads, and nothing else', () => {
  const schema = envSchema();
  assert.ok(schema.size >= 20, `only ${schema.size} settings found in config.ts`);
  const listed = settingsTable().flatMap((r) => r.names);
  assert.equal(
    [...schema.keys()].filter((name) => !listed.includes(name)),
    [],
    'settings missing from docs/operators.md',
  );
  assert.equal(
    listed.filter((name) => !schema.has(name)),
    [],
    'settings in docs/operators.md that config.ts does not read',
  );
  assert.equal(
    listed.filter((name, i) => listed.indexOf(name) !== i),
    [],
    'settings listed twice',
  );
});

test('the settings table gives the ranges, values and defaults of config.ts', () => {
  const schema = envSchema();
  const scheduleDefault = /value \?\? '([^']+)'/.exec(read('server/config-values.ts'))?.[1];
  assert.ok(scheduleDefault);
  const problems: string[] = [];
  for (const row of settingsTable()) {
    for (const name of row.names) {
      const source = schema.get(name)!;
      const range = /^int\(([\d_]+), ([\d_]+), ([\d_]+)\)/.exec(source);
      if (range) {
        const [min, max, fallback] = [number(range[1]!), number(range[2]!), number(range[3]!)];
        if (!row.meaning.includes(`${min}…${max}`)) problems.push(`${name}: the range ${min}…${max}`);
        if (!mentions(row.fallback, fallback)) problems.push(`${name}: the default ${fallback}`);
      }
      const fallback = /\.default\('([^']+)'\)/.exec(source)?.[1];
      if (fallback !== undefined && !row.fallback.includes(fallback)) problems.push(`${name}: the default ${fallback}`);
      for (const value of /z\.enum\(\[([^\]]+)\]\)/.exec(source)?.[1]?.match(/'[^']+'/g) ?? []) {
        if (!mentions(row.text, value.slice(1, -1))) problems.push(`${name}: the value ${value}`);
      }
      const least = /\.min\((\d+), '/.exec(source)?.[1] ?? />= (\d+)/.exec(source)?.[1];
      if (least && !mentions(row.meaning, least)) problems.push(`${name}: at least ${least}`);
      if (source === 'schedule,' && !row.fallback.includes(scheduleDefault))
        problems.push(`${name}: the default ${scheduleDefault}`);
      if (source === 'flag,' && !/\bflag\b/.test(row.meaning)) problems.push(`${name}: a flag`);
    }
  }
  assert.equal(problems, [], 'docs/operators.md differs from server/config.ts');
});

test.run();
