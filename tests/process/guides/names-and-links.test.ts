import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { architecture, operators, read, root } from './support.ts';

// The operators' and the architecture guides: every file, name and link they give is in the repository.
const test = suite('the operators and architecture guides: names and links');

/** Paths of the repository named in backticks, outside code blocks. */
const REPO_PATH =
  /^(?:(?:domain|adapters|server|client|tests|docs|examples|bench)\/[\w./*-]*|[\w.-]+\.(?:ts|md|json))$/;
const namedPaths = (doc: string) =>
  [...doc.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!).filter((s) => REPO_PATH.test(s));

test('every file and folder the guides name exists', () => {
  const named = [...new Set([...namedPaths(architecture), ...namedPaths(operators)])];
  assert.ok(named.length >= 15, `only ${named.length} paths named`);
  const missing = named.filter(
    (p) => !existsSync(join(root, p.includes('*') ? dirname(p.slice(0, p.indexOf('*'))) : p)),
  );
  assert.equal(missing, []);
});

/** Names that are not the service's own: PostgreSQL's (and every `pg_…`), MikroORM's, and the samples' database. */
const OUTSIDE_NAMES = new Set(['max_connections', 'mikro_orm_migrations', 'partner_api']);

test('every table, column, function, channel and metric the guides name (snake_case, outside the samples) is in the code', () => {
  const sources = ['adapters', 'server', 'domain', 'client']
    .flatMap((dir) =>
      (readdirSync(join(root, dir), { recursive: true }) as string[])
        .filter((f) => f.endsWith('.ts'))
        .map((f) => read(join(dir, f))),
    )
    .join('\n');
  const texts = [operators, architecture].flatMap((doc) => {
    const prose = doc.replace(/```sh\n[\s\S]*?```/g, '');
    return [
      ...prose.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g),
      ...prose.matchAll(/```mermaid\n([\s\S]*?)```/g),
    ].map((m) => m[1]!);
  });
  const names = new Set(texts.flatMap((t) => t.match(/(?<![\w-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w-])/g) ?? []));
  assert.ok(names.size >= 8, `only ${names.size} names found`);
  const unknown = [...names].filter(
    (n) => !n.startsWith('pg_') && !OUTSIDE_NAMES.has(n) && !new RegExp(`\\b${n}\\b`).test(sources),
  );
  assert.equal(unknown, []);
});

const slug = (heading: string) =>
  heading
    .replaceAll('`', '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replaceAll(' ', '-');

test('every link of the guides leads to a file, and to a heading of it', () => {
  const problems: string[] = [];
  for (const [path, doc] of [
    ['docs/operators.md', operators],
    ['docs/architecture.md', architecture],
  ] as const) {
    for (const [, target] of doc.replace(/```[\s\S]*?```/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [file, anchor] = target!.split('#');
      const resolved = file ? join(dirname(path), file) : path;
      if (!existsSync(join(root, resolved))) {
        problems.push(`${path}: ${target}`);
        continue;
      }
      if (
        anchor &&
        !read(resolved)
          .split('\n')
          .some((l) => /^#+ /.test(l) && slug(l.replace(/^#+ /, '')) === anchor)
      )
        problems.push(`${path}: ${target}`);
    }
  }
  assert.equal(problems, []);
});

test.run();
