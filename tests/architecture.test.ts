import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = join(import.meta.dirname, '..');
const test = suite('architecture');

const sources = (dir: string) =>
  (readdirSync(join(root, dir), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => join(dir, f));
const importsOf = (file: string) =>
  [...readFileSync(join(root, file), 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/g)].map((m) => m[1]!);

const INTO_ADAPTERS = /^\.{1,2}\/(?:\.\.\/)*adapters\//;
const FORBIDDEN_IN_DOMAIN = /^(express|@trpc\/|@mikro-orm\/|jose$|pg$|pg-|p-retry$|zod$|zod\/|trpc-to-openapi|nodemailer|@electric-sql\/|pino|undici)/;

test('domain/ imports no framework, ORM, HTTP, JWT, driver or validation library', () => {
  const offenders = sources('domain').flatMap((file) => importsOf(file).filter((s) => FORBIDDEN_IN_DOMAIN.test(s)).map((s) => `${file}: ${s}`));
  assert.equal(offenders, []);
});

test('domain/ imports nothing from server/ or adapters/', () => {
  const offenders = sources('domain').flatMap((file) => importsOf(file).filter((s) => /(^|\/)(server|adapters)\//.test(s)).map((s) => `${file}: ${s}`));
  assert.equal(offenders, []);
});

test('only the composition root and entry points import adapters/', () => {
  const allowed = new Set(['server/compose.ts', 'server/main.ts', 'server/migrate.ts', 'server/seed-bench.ts']); // entry points and the root
  const offenders = [...sources('server'), ...sources('domain')]
    .filter((file) => !allowed.has(file))
    .flatMap((file) => importsOf(file).filter((s) => INTO_ADAPTERS.test(s)).map((s) => `${file}: ${s}`));
  assert.equal(offenders, []);
});

test('the checks above do detect a forbidden import', () => {
  assert.ok(FORBIDDEN_IN_DOMAIN.test('@mikro-orm/core'));
  assert.ok(FORBIDDEN_IN_DOMAIN.test('zod'));
  assert.ok(FORBIDDEN_IN_DOMAIN.test('jose'));
  assert.not.ok(FORBIDDEN_IN_DOMAIN.test('./ports.ts'));
  assert.ok(importsOf('server/compose.ts').some((s) => INTO_ADAPTERS.test(s)));
  assert.not.ok(INTO_ADAPTERS.test('@trpc/server/adapters/express'));
});

test.run();
