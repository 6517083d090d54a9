import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = join(import.meta.dirname, '..');
const test = suite('architecture');

const sources = (dir: string) =>
  (readdirSync(join(root, dir), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
/** Static imports and re-exports, and dynamic `import('…')` of a literal. */
const importsIn = (text: string) => [
  ...[...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/g)].map((m) => m[1]!),
  ...[...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!),
];
const importsOf = (file: string) => importsIn(readFileSync(join(root, file), 'utf8'));

const INTO_ADAPTERS = /^\.{1,2}\/(?:\.\.\/)*adapters\//;
const FORBIDDEN_IN_DOMAIN =
  /^(express|@trpc\/|@mikro-orm\/|jose$|pg$|pg-|p-retry$|zod$|zod\/|trpc-to-openapi|nodemailer|@electric-sql\/|pino|undici)/;

test('domain/ imports no framework, ORM, HTTP, JWT, driver or validation library', () => {
  const offenders = sources('domain').flatMap((file) =>
    importsOf(file)
      .filter((s) => FORBIDDEN_IN_DOMAIN.test(s))
      .map((s) => `${file}: ${s}`),
  );
  assert.equal(offenders, []);
});

test('domain/ imports nothing from server/ or adapters/', () => {
  const offenders = sources('domain').flatMap((file) =>
    importsOf(file)
      .filter((s) => /(^|\/)(server|adapters)\//.test(s))
      .map((s) => `${file}: ${s}`),
  );
  assert.equal(offenders, []);
});

test('only the composition root and entry points import adapters/', () => {
  // Entry points and the root (read-replicas.ts: the root's wiring of the replicas, which only API processes open).
  const allowed = new Set([
    'server/compose.ts',
    'server/read-replicas.ts',
    'server/main.ts',
    'server/migrate.ts',
    'server/seed-bench.ts',
  ]);
  const offenders = [...sources('server'), ...sources('domain')]
    .filter((file) => !allowed.has(file))
    .flatMap((file) =>
      importsOf(file)
        .filter((s) => INTO_ADAPTERS.test(s))
        .map((s) => `${file}: ${s}`),
    );
  assert.equal(offenders, []);
});

/**
 * What bench/ and server/seed-bench.ts may import, besides node: built-ins, bench/ itself and domain/: benchmarks start
 * the service as a process and talk to it over HTTP; the few pieces of it they use directly are named here, each for a
 * reason, so that a benchmark cannot quietly come to measure something else than the service (a composition of its
 * own).
 */
const BENCH_MODULES = new Set([
  'tests/support/process.ts', // starting the service and logging integrators in, as the process tests do
  'tests/support/temp-postgres.ts', // a free port for a start, as the process tests find one
  'tests/support/temp-replica.ts', // a primary and a streaming replica of its own, as the replica tests make
  'adapters/persistence/partner-order-queries.ts',
  'adapters/persistence/rows.ts', // the bare listing peer runs the service's own SQL
  'adapters/signatures.ts', // the signature-timing bench and the bare sender sign as the service does
  'adapters/persistence/database/open.ts',
  'server/config.ts', // seed-bench opens and migrates the configured database
  // the floor app: the service's own zod contracts and logger, on the bare stack
  'server/routers/commands.contract.ts',
  'server/routers/events.contract.ts',
  'server/routers/partner-commands.contract.ts',
  'server/routers/partner-orders.contract.ts',
  'server/logger.ts',
  // the portal's load: the browser as the browser tests drive it, and where the built portal lies (its bundle's size)
  'tests/browser/support.ts',
  'server/http/portal.ts',
  'server/http/events-feed.ts', // the feed page's bytes, as the service writes them, against one string's
]);
const BENCH_PACKAGES = new Set([
  'pg',
  'pg-cursor',
  'autocannon',
  'undici',
  'cli-progress',
  '@electric-sql/pglite', // the embedded soak reads the stopped service's events from its data folder
  'express',
  '@trpc/server',
  'trpc-to-openapi',
  'pino-http', // the floor app's stack
  'playwright-core', // the portal's load, in Chromium
]);
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
function benchImportAllowed(file: string, specifier: string) {
  if (specifier.startsWith('node:')) return true;
  if (!specifier.startsWith('.')) return BENCH_PACKAGES.has(packageOf(specifier));
  const target = posix.normalize(posix.join(dirname(file), specifier));
  return target.startsWith('bench/') || target.startsWith('domain/') || BENCH_MODULES.has(target);
}

test('bench/ and server/seed-bench.ts import only what is listed for them', () => {
  const offenders = [...sources('bench'), 'server/seed-bench.ts'].flatMap((file) =>
    importsOf(file)
      .filter((s) => !benchImportAllowed(file, s))
      .map((s) => `${file}: ${s}`),
  );
  assert.equal(offenders, []);
});

/** Where a relative import of `file` lands, from the repository's root. */
const targetOf = (file: string, specifier: string) => posix.normalize(posix.join(dirname(file), specifier));
const portalSources = () => [
  'portal/vite.config.ts',
  ...(readdirSync(join(root, 'portal', 'src'), { recursive: true }) as string[])
    .filter((f) => /\.tsx?$/.test(f))
    .map((f) => posix.join('portal/src', f)),
];
const leavesPortal = (file: string, specifier: string) =>
  specifier.startsWith('.') && !targetOf(file, specifier).startsWith('portal/');
const entersPortal = (file: string, specifier: string) =>
  specifier.startsWith('.') && targetOf(file, specifier).startsWith('portal/');

/** `import type` specifiers: erased by the build, so nothing of what they name runs in the page. */
const TYPE_IMPORT = /(?:^|\n)\s*import\s+type\s[^'"]*?from\s+['"]([^'"]+)['"]/g;
const typeImportsOf = (file: string) =>
  [...readFileSync(join(root, file), 'utf8').matchAll(TYPE_IMPORT)].map((m) => m[1]!);
/** The typed RPC's router: the operator console's client takes its type, as internal tools are meant to. */
const ROUTER_TYPE = 'server/routers/index.ts';

test('the portal imports nothing of the API code but the router type (the API reaches it over HTTP)', () => {
  const offenders = portalSources().flatMap((file) =>
    importsOf(file)
      .filter((s) => leavesPortal(file, s))
      .filter((s) => !(targetOf(file, s) === ROUTER_TYPE && typeImportsOf(file).includes(s)))
      .map((s) => `${file}: ${s}`),
  );
  assert.equal(offenders, []);
});

test('the API code imports nothing of the portal (it serves its built files as files)', () => {
  const offenders = ['domain', 'server', 'adapters', 'client'].flatMap(sources).flatMap((file) =>
    importsOf(file)
      .filter((s) => entersPortal(file, s))
      .map((s) => `${file}: ${s}`),
  );
  assert.equal(offenders, []);
});

/** Every file of code git tracks, wherever it is (a new folder included); the migrations aside. */
const codeFiles = () =>
  execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((f) => /\.(ts|tsx|mts|mjs|js|cjs)$/.test(f) && !f.startsWith('adapters/persistence/migrations/'));
test('no file of code is over 300 lines (migrations aside)', () => {
  const lines = (file: string) => readFileSync(join(root, file), 'utf8').trimEnd().split('\n').length;
  const long = codeFiles()
    .map((file) => [file, lines(file)] as const)
    .filter(([, n]) => n > 300);
  assert.equal(long, []);
  assert.ok(codeFiles().length > 100, 'the walk found the code');
});

// Biome wraps code at 120 columns; what it cannot wrap (comments, string and SQL text) is counted, and the count may
// only fall: wrap such a line when you touch it, then lower the bound.
const LONG_LINES_LEFT = 694;
test(`at most ${LONG_LINES_LEFT} lines of code over 120 characters (the formatter wraps the rest), none added`, () => {
  const long = codeFiles().flatMap((file) =>
    readFileSync(join(root, file), 'utf8')
      .split('\n')
      .filter((line) => line.length > 120),
  );
  assert.ok(long.length <= LONG_LINES_LEFT, `${long.length} lines over 120 characters, ${LONG_LINES_LEFT} allowed`);
});

test("no code spreads a unit's deps: their services and repositories are on the prototype (derive with Object.create)", () => {
  const spread = /\.\.\.\s*(?:[\w.]+\.)?deps\b/;
  const offenders = codeFiles().filter(
    (f) => /^(domain|server|adapters|client|bench)\//.test(f) && spread.test(readFileSync(join(root, f), 'utf8')),
  );
  assert.equal(offenders, []);
  assert.ok(
    spread.test('{ ...ctx.deps, ids }') && spread.test('{ ...deps }') && !spread.test('{ ...depsOf(x) }'),
    'the pattern finds a spread',
  );
});

// The routes come from one contracts module (server/routers/contracts.ts) that the routers, the REST adapter and the
// document all read; tRPC's internals are read by tRPC and trpc-to-openapi alone in the code. Tests may: the one that
// holds table and router together (tests/server/route-table.test.ts), the fuzz that needs each procedure's kind
// (tests/fuzz/endpoints/trpc.test.ts), and the probes' router, built on the app's (tests/http/errors.test.ts).
test("no code reads a router's internals (`_def`): the route table is server/routers/contracts.ts", () => {
  const internals = /\b_def\b/;
  const offenders = codeFiles().filter(
    (f) => /^(domain|server|adapters|client)\//.test(f) && internals.test(readFileSync(join(root, f), 'utf8')),
  );
  assert.equal(offenders, []);
  assert.ok(
    internals.test('router._def.procedures') &&
      internals.test('({ _def: { meta } }) =>') &&
      !internals.test('undefined'),
    'the pattern finds a read',
  );
});

// The route table (server/routers/contracts.ts) gathers the contracts for the rest of the code.
test("a router's contract is read by its router and the request pipeline only", () => {
  const contract = /from '[^']*\/[\w-]+\.contract\.ts'|from '\.\/[\w-]+\.contract\.ts'/;
  const offenders = codeFiles().filter(
    (f) =>
      /^(domain|server|adapters|client)\//.test(f) &&
      !/^server\/(routers|pipeline)\//.test(f) &&
      contract.test(readFileSync(join(root, f), 'utf8')),
  );
  assert.equal(offenders, []);
  assert.ok(
    contract.test("import { partnerCommands } from '../routers/partner-commands.contract.ts';"),
    'the pattern finds one',
  );
});

test("what a tool writes is not in the tree: the portal's API types are generated at install and before each type check", () => {
  assert.not.ok(codeFiles().includes('portal/src/api/schema.d.ts'));
  assert.ok(codeFiles().includes('server/openapi/emit.ts'), 'the list is of tracked files');
});

test('the checks above do detect a forbidden import', () => {
  assert.ok(portalSources().includes('portal/src/pages/Endpoint.tsx'));
  assert.ok(leavesPortal('portal/src/pages/Endpoint.tsx', '../../../domain/errors.ts'));
  assert.not.ok(leavesPortal('portal/src/pages/Endpoint.tsx', '../api/client'));
  assert.ok(entersPortal('server/http/portal.ts', '../../portal/src/api/client.ts'));
  assert.not.ok(entersPortal('server/http/portal.ts', './app.ts'));
  assert.ok(benchImportAllowed('bench/soak/load.ts', './config.ts'));
  assert.ok(benchImportAllowed('bench/floor-app.ts', '../server/routers/commands.contract.ts'));
  assert.ok(benchImportAllowed('bench/bare-server.ts', '../domain/payloads.ts'));
  assert.ok(benchImportAllowed('bench/soak/processes.ts', '../../tests/support/process.ts'));
  assert.ok(benchImportAllowed('bench/noise.ts', 'undici'));
  assert.not.ok(benchImportAllowed('bench/commands.ts', '../server/compose.ts'));
  assert.not.ok(benchImportAllowed('bench/soak/index.ts', '../../adapters/persistence/unit-of-work.ts'));
  assert.not.ok(benchImportAllowed('server/seed-bench.ts', './routers/index.ts'));
  assert.not.ok(benchImportAllowed('bench/commands.ts', '@mikro-orm/core'));
  assert.not.ok(benchImportAllowed('bench/commands.ts', '../tests/fakes.ts'));
  assert.equal(importsIn("const { PGlite } = await import('@electric-sql/pglite');"), ['@electric-sql/pglite']);
  assert.ok(FORBIDDEN_IN_DOMAIN.test('@mikro-orm/core'));
  assert.ok(FORBIDDEN_IN_DOMAIN.test('zod'));
  assert.ok(FORBIDDEN_IN_DOMAIN.test('jose'));
  assert.not.ok(FORBIDDEN_IN_DOMAIN.test('./ports.ts'));
  assert.ok(importsOf('server/compose.ts').some((s) => INTO_ADAPTERS.test(s)));
  assert.not.ok(INTO_ADAPTERS.test('@trpc/server/adapters/express'));
});

test.run();
