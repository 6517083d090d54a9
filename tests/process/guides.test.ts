import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { skipUnless } from '../support/skip.ts';

// The operators' and the architecture guides, held to the code. docs/operators.md: its settings table names exactly the
// settings server/config.ts reads, with their ranges and defaults, and every shell sample runs as written (a fresh
// folder per sample; the samples marked for PostgreSQL on the suite's second pass, in a database of this test's own).
// docs/architecture.md: every diagram is Mermaid that GitHub can draw, and every file it names exists.
const test = suite('the operators and architecture guides');
const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const operators = read('docs/operators.md');
const architecture = read('docs/architecture.md');
const server = process.env.DATABASE_URL; // set on the PostgreSQL pass of the suite

// ---------------------------------------------------------------------------------------------------------------
// The settings table

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

interface SettingRow { names: string[]; text: string; meaning: string; fallback: string }

function settingsTable(): SettingRow[] {
  const rows = section(operators, 'Settings').split('\n').filter((line) => line.startsWith('|')).slice(2);
  return rows.map((row) => {
    const cells = row.slice(1, -1).split('|').map((c) => c.trim());
    assert.is(cells.length, 3, `a row of the settings table has ${cells.length} cells: ${row}`);
    const plain = (s: string) => s.replaceAll('`', '');
    return {
      names: [...cells[0]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!),
      text: plain(row), meaning: plain(cells[1]!), fallback: plain(cells[2]!),
    };
  });
}

const number = (source: string) => source.replaceAll('_', '');
const mentions = (text: string, value: string) => new RegExp(`(^|[^\\w.])${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^\\w]|$)`).test(text);

test('the settings table names every setting config.ts reads, and nothing else', () => {
  const schema = envSchema();
  assert.ok(schema.size >= 20, `only ${schema.size} settings found in config.ts`);
  const listed = settingsTable().flatMap((r) => r.names);
  assert.equal([...schema.keys()].filter((name) => !listed.includes(name)), [], 'settings missing from docs/operators.md');
  assert.equal(listed.filter((name) => !schema.has(name)), [], 'settings in docs/operators.md that config.ts does not read');
  assert.equal(listed.filter((name, i) => listed.indexOf(name) !== i), [], 'settings listed twice');
});

test('the settings table gives the ranges, values and defaults of config.ts', () => {
  const schema = envSchema();
  const config = read('server/config.ts');
  const scheduleDefault = /value \?\? '([^']+)'/.exec(config)?.[1];
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
      if (source === 'schedule,' && !row.fallback.includes(scheduleDefault)) problems.push(`${name}: the default ${scheduleDefault}`);
      if (source === 'flag,' && !/\bflag\b/.test(row.meaning)) problems.push(`${name}: a flag`);
    }
  }
  assert.equal(problems, [], 'docs/operators.md differs from server/config.ts');
});

// ---------------------------------------------------------------------------------------------------------------
// The shell samples

interface Sample { id: string; only: 'postgres' | 'embedded' | null; code: string }

const samples: Sample[] = [...operators.matchAll(/<!-- operators: ([\w-]+)(?: (postgres|embedded))? -->\n```sh\n([\s\S]*?)```/g)]
  .map((m) => ({ id: m[1]!, only: (m[2] as Sample['only']) ?? null, code: m[3]! }));
const helpers = samples.find((s) => s.id === 'helpers');

/** Ports the samples use; each becomes a free port of the test's own. */
const PORTS = ['3000', '3001', '3100'];
/** Folders the samples use; each becomes a folder of the same name in the sample's own temporary folder. */
const FOLDERS = ['/var/lib', '/var/log', '/backups'];

interface Expectation {
  /** What the sample's output (its stdout and stderr) must show. */
  shows: (string | RegExp)[];
  /** Checks after the sample, in the folder it ran in. */
  after?: (run: { dir: string; database: string | null }) => Promise<void>;
}

const withDatabase = (url: string, name: string) => { const u = new URL(url); u.pathname = `/${name}`; return u.toString(); };
async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

const expectations: Record<string, Expectation> = {
  'bad-setting': { shows: ['PORT: must be a whole number', /^exit code 1$/m] },
  'postgres-processes': {
    shows: [/schema up to date \(postgresql\): Migration20261122000000_initial, /, '{"status":"ready"}', '{"status":"ok"}'],
    after: async ({ dir }) => {
      const roles = readdirSync(join(dir, 'log', 'partner-api')).map((f) => /"port":\d+,"role":"(\w+)"[^\n]*"msg":"ready: /.exec(readFileSync(join(dir, 'log', 'partner-api', f), 'utf8'))?.[1]);
      assert.equal(roles.sort(), ['api', 'api', 'worker']);
    },
  },
  'health-and-shutdown': {
    shows: ['{"status":"ok"}', '{"status":"ready"}', '"msg":"stopped"',
      server ? '"msg":"shutting down: every process drains"' : '"msg":"shutting down: no new connections, finishing requests under way"'],
  },
  'shared-limits': { shows: [/^\d+: 200\n\d+: 200\n\d+: 429$/m] },
  metrics: {
    shows: [/^401$/m, /^commands_oldest_accepted_age_seconds \d/m, /^webhook_deliveries_oldest_pending_age_seconds \d/m,
      server ? /^db_pool_connections\{state="max"\} 60$/m : /^db_pool_connections\{state="max"\} 1$/m],
  },
  cluster: {
    shows: [/"msg":"ready: http:\/\/localhost:\d+ \(API reference: http:\/\/localhost:\d+\/docs\); 2 API processes and a worker, at most 60 database connections \(20 each\)"/, /^db_pool_connections\{state="max"\} 60$/m, /^4$/m],
  },
  autovacuum: { shows: [/^(on|off)$/m, 'n_dead_tup', 'VACUUM'] },
  'backup-postgres': {
    shows: ['setval', /schema up to date \(postgresql\): Migration20261122000000_initial, /],
    after: async ({ database }) => {
      const original = withDatabase(server!, database!);
      const restored = withDatabase(server!, `${database}_restored`);
      const tables = (url: string) => query<{ t: string }>(url, `select tablename as t from pg_tables where schemaname = 'public' order by 1`);
      assert.equal(await tables(restored), await tables(original), 'the restored database has the same tables');
      const migrations = (url: string) => query<{ name: string }>(url, 'select name from mikro_orm_migrations order by name');
      assert.equal(await migrations(restored), await migrations(original));
      const [position] = await query<{ last_value: string }>(restored, 'select last_value from events_position_seq');
      assert.ok(Number(position!.last_value) >= 1_000_000_000, 'the feed positions moved on');
    },
  },
  'backup-embedded': {
    shows: ['{"status":"ready"}'],
    after: async ({ dir }) => {
      assert.ok(existsSync(join(dir, 'backups', 'partner-api.tar.gz')));
      assert.ok(existsSync(join(dir, 'lib', 'partner-api-restored', 'jwt-secret')), 'the generated key came back with the data');
      assert.ok(readdirSync(join(dir, 'lib', 'partner-api-restored', 'pglite')).length > 0);
    },
  },
  'rotate-jwt-secret': { shows: [/^200\n200\n401$/m] },
  'rotate-signature-key': { shows: ['"scope":"partner"', '"enabled":true', '"hasSignatureKey":true', /"previousKeyExpiresAt":"\d{4}-\d\d-\d\dT[\d:.]+Z"/] },
  'embedded-one-process': {
    shows: [/is in use by another process[\s\S]*exit code 1[\s\S]*SERVICE_ROLE: "worker" needs DATABASE_URL[\s\S]*exit code 1/],
  },
};

test('every code block of docs/operators.md is a shell sample that this test runs, with checks of its own', () => {
  const fences = [...operators.matchAll(/^```(\w*)$/gm)].map((m) => m[1]);
  const opened = fences.filter((_, i) => i % 2 === 0);
  assert.equal(opened.filter((lang) => lang !== 'sh'), [], 'code blocks that are not shell samples');
  assert.is(samples.length, opened.length, 'a shell sample without its <!-- operators: … --> marker');
  assert.ok(helpers, 'the helpers sample');
  assert.equal(samples.map((s) => s.id).filter((id) => id !== 'helpers').sort(), Object.keys(expectations).sort());
  assert.ok(samples.some((s) => s.only === 'postgres') && samples.some((s) => s.only === 'embedded') && samples.some((s) => s.only === null));
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * The sample as it runs here: the helpers first; the folders under /var/lib/, /var/log/ and /backups/ in `dir`; the
 * documented ports on free ones; on PostgreSQL, the documented server and database `partner_api` as this test's.
 */
async function localize(code: string, dir: string, database: string | null): Promise<string> {
  let script = `${helpers!.code}\n${code}`;
  const literals = [...script.matchAll(/(?:localhost:|PORT=|PORT:-)(\d+)/g)].map((m) => m[1]!);
  assert.equal(literals.filter((p) => !PORTS.includes(p)), [], 'ports the test does not replace');
  for (const port of PORTS) script = script.replace(new RegExp(`\\b${port}\\b`, 'g'), String(await freePort()));
  FOLDERS.forEach((folder, i) => { script = script.replace(new RegExp(`(?<![\\w/.])${folder.replaceAll('/', '\\/')}(?![\\w-])`, 'g'), `\u0000${i}`); });
  assert.not.match(script, /\/var\/|\/backups/, 'folders the test does not replace');
  FOLDERS.forEach((folder, i) => { script = script.replaceAll(`\u0000${i}`, `${dir}/${folder.split('/').at(-1)}`); });
  if (database) {
    const base = new URL(server!);
    script = script.replaceAll('postgres://postgres@127.0.0.1:5432/', `${base.protocol}//${base.username ? `${base.username}${base.password ? `:${base.password}` : ''}@` : ''}${base.host}/`)
      .replaceAll('partner_api', database);
  }
  return script;
}

/** Runs the script in a process group of its own; whatever it leaves running is killed, and reported. */
function runScript(script: string, env: Record<string, string>): Promise<{ status: number | null; output: string; leftovers: boolean }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => { output += d; });
    child.stderr.on('data', (d: Buffer) => { output += d; });
    const group = (signal: NodeJS.Signals | 0) => { try { process.kill(-child.pid!, signal); return true; } catch { return false; } };
    const timer = setTimeout(() => { output += '\n[the sample took longer than 2 minutes]'; group('SIGKILL'); }, 120_000);
    let exit: { status: number | null; leftovers: boolean } = { status: null, leftovers: false };
    child.on('exit', (status) => {
      clearTimeout(timer);
      exit = { status, leftovers: group(0) };
      if (exit.leftovers) group('SIGKILL');
    });
    child.on('close', () => resolve({ ...exit, output }));
  });
}

let database: string | null = null;
const dirs: string[] = [];

test.before(async () => {
  if (!server) return;
  database = `pbi_guides_${process.pid}_${Date.now()}`;
  await query(withDatabase(server, 'postgres'), `create database ${database}`);
});

test.after(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  if (!server || !database) return;
  const admin = withDatabase(server, 'postgres');
  for (const { datname } of await query<{ datname: string }>(admin, `select datname from pg_database where datname like '${database}%'`)) {
    await query(admin, `drop database if exists ${pg.escapeIdentifier(datname)} with (force)`);
  }
});

for (const sample of samples.filter((s) => s.id !== 'helpers')) {
  const runs = sample.only === null || (sample.only === 'postgres') === Boolean(server);
  test(`docs/operators.md runs as written: ${sample.id}`, async () => {
    if (skipUnless(runs, sample.only === 'postgres' ? 'needs PostgreSQL (DATABASE_URL)' : 'the embedded pass runs it')) return;
    const dir = mkdtempSync(join(tmpdir(), `pbi-guides-${sample.id}-`));
    dirs.push(dir);
    for (const folder of ['lib', 'log', 'backups']) mkdirSync(join(dir, folder));
    const env: Record<string, string> = {
      PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? '',
      ...(server && database && { DATABASE_URL: withDatabase(server, database) }),
    };
    const { status, output, leftovers } = await runScript(await localize(sample.code, dir, database), env);
    const logs = existsSync(join(dir, 'log', 'partner-api'))
      ? readdirSync(join(dir, 'log', 'partner-api')).map((f) => `--- ${f}\n${readFileSync(join(dir, 'log', 'partner-api', f), 'utf8').slice(-1500)}`).join('\n')
      : '';
    assert.is(status, 0, `the sample stopped (exit ${status}):\n${output.slice(-3000)}\n${logs}`);
    assert.not.ok(leftovers, `the sample left processes running:\n${output.slice(-2000)}`);
    for (const shown of expectations[sample.id]!.shows) {
      assert.ok(typeof shown === 'string' ? output.includes(shown) : shown.test(output), `the output lacks ${String(shown)}:\n${output.slice(-3000)}`);
    }
    await expectations[sample.id]!.after?.({ dir, database });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Diagrams, files and links

const DIAGRAM_TYPES = /^(?:(?:flowchart|graph) (?:TB|TD|BT|RL|LR)|sequenceDiagram)$/;

/** What Mermaid would refuse, or draw other than meant, in a flowchart: every label is quoted, nothing else is free text. */
function flowchartProblems(lines: string[]): string[] {
  const SHAPES = ['[""]', '("")', '{""}', '([""])', '((""))', '[[""]]', '{{""}}', '>""]', '[("")]'];
  const TOKEN = new RegExp(`^(?:[A-Za-z_]\\w*(?:${SHAPES.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})?|-->|---|-\\.->|==>|<-->|\\|""\\||&)`);
  const problems: string[] = [];
  for (const line of lines) {
    if (/^(?:end|direction (?:TB|TD|BT|RL|LR)|(?:classDef|class|style|linkStyle) .+)$/.test(line)) continue;
    if ((line.match(/"/g) ?? []).length % 2 !== 0) { problems.push(`unbalanced quotes: ${line}`); continue; }
    const bare = line.replace(/"[^"]*"/g, '""');
    if (/^subgraph [A-Za-z_]\w*(?:\[""\])?$/.test(bare)) continue;
    let rest = bare.trim();
    while (rest.length > 0) {
      const token = TOKEN.exec(rest);
      if (!token || /^end\b/.test(rest)) { problems.push(`not a flowchart statement (labels must be quoted): ${line}`); break; }
      rest = rest.slice(token[0].length).trimStart();
    }
  }
  return problems;
}

/** The same for a sequence diagram: known statements, declared participants, blocks closed, no `;` or `#` in text. */
function sequenceProblems(lines: string[]): string[] {
  const problems: string[] = [];
  const participants = new Set<string>();
  const open: string[] = [];
  const known = (id: string, line: string) => { if (!participants.has(id)) problems.push(`undeclared participant ${id}: ${line}`); };
  for (const line of lines) {
    if (/[;#]/.test(line)) { problems.push(`";" or "#" in a sequence diagram: ${line}`); continue; }
    let m: RegExpExecArray | null;
    if (line === 'autonumber') continue;
    if ((m = /^(?:participant|actor) ([A-Za-z_]\w*)(?: as .+)?$/.exec(line))) { participants.add(m[1]!); continue; }
    if ((m = /^Note (?:over|left of|right of) ([A-Za-z_]\w*)(?:,([A-Za-z_]\w*))?: .+$/.exec(line))) {
      known(m[1]!, line);
      if (m[2]) known(m[2], line);
      continue;
    }
    if ((m = /^(loop|alt|opt|par|critical|break|rect)\b.*$/.exec(line))) { open.push(m[1]!); continue; }
    if ((m = /^(else|and|option)\b.*$/.exec(line))) {
      const inside = { else: 'alt', and: 'par', option: 'critical' }[m[1] as 'else' | 'and' | 'option'];
      if (open.at(-1) !== inside) problems.push(`${m[1]} outside ${inside}: ${line}`);
      continue;
    }
    if (line === 'end') { if (!open.pop()) problems.push('an end without a block'); continue; }
    if ((m = /^(?:activate|deactivate) ([A-Za-z_]\w*)$/.exec(line))) { known(m[1]!, line); continue; }
    if ((m = /^([A-Za-z_]\w*) ?(?:->>|-->>|->|-->|-x|--x|-\)|--\))[+-]? ?([A-Za-z_]\w*): .+$/.exec(line))) {
      known(m[1]!, line);
      known(m[2]!, line);
      continue;
    }
    problems.push(`not a sequence diagram statement: ${line}`);
  }
  if (open.length > 0) problems.push(`blocks left open: ${open.join(', ')}`);
  return problems;
}

function mermaidProblems(code: string): string[] {
  const lines = code.split('\n').map((l) => l.trim()).filter((l) => l.length > 0 && !l.startsWith('%%'));
  const [type, ...body] = lines;
  if (!type || !DIAGRAM_TYPES.test(type)) return [`not a flowchart or sequence diagram: ${type}`];
  if (body.length === 0) return ['an empty diagram'];
  return type === 'sequenceDiagram' ? sequenceProblems(body) : flowchartProblems(body);
}

test('docs/architecture.md: Mermaid diagrams of the layers, a request, an event, a brand command and the feed; nothing else in code blocks', () => {
  const fences = [...architecture.matchAll(/^```(\w*)$/gm)].map((m) => m[1]).filter((_, i) => i % 2 === 0);
  assert.equal(fences.filter((lang) => lang !== 'mermaid'), [], 'code blocks other than diagrams');
  const diagrams = [...architecture.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1]!);
  assert.ok(diagrams.length >= 5, `${diagrams.length} diagrams`);
  assert.ok(diagrams.filter((d) => d.startsWith('sequenceDiagram')).length >= 4, 'the sequence diagrams');
  assert.ok(diagrams.some((d) => /^(flowchart|graph) /.test(d)), 'the layers');
  assert.equal(diagrams.flatMap((d, i) => mermaidProblems(d).map((p) => `diagram ${i + 1}: ${p}`)), []);
});

test('the diagram checks do catch what Mermaid refuses', () => {
  assert.equal(mermaidProblems('flowchart LR\n  a["x"] --> b["y"]\n  a -->|"z"| b'), []);
  assert.ok(mermaidProblems('flowchart LR\n  a[foo (bar)] --> b').length > 0);
  assert.ok(mermaidProblems('flowchart LR\n  a["x"] --> end').length > 0);
  assert.ok(mermaidProblems('sequenceDiagram\n  participant A\n  A->>B: hello').length > 0);
  assert.ok(mermaidProblems('sequenceDiagram\n  participant A\n  loop forever\n  A->>A: again').length > 0);
  assert.ok(mermaidProblems('sequenceDiagram\n  participant A\n  A->>A: one; two').length > 0);
  assert.ok(mermaidProblems('pie\n  "a": 1').length > 0);
  assert.equal(mermaidProblems('sequenceDiagram\n  participant A as a (b)\n  alt x\n  A-->>A: y\n  else z\n  Note over A: w\n  end'), []);
});

/** Paths of the repository named in backticks, outside code blocks. */
const REPO_PATH = /^(?:(?:domain|adapters|server|client|tests|docs|examples|bench)\/[\w./*-]*|[\w.-]+\.(?:ts|md|json))$/;
const namedPaths = (doc: string) => [...doc.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!).filter((s) => REPO_PATH.test(s));

test('every file and folder the guides name exists', () => {
  const named = [...new Set([...namedPaths(architecture), ...namedPaths(operators)])];
  assert.ok(named.length >= 15, `only ${named.length} paths named`);
  const missing = named.filter((p) => !existsSync(join(root, p.includes('*') ? dirname(p.slice(0, p.indexOf('*'))) : p)));
  assert.equal(missing, []);
});

/** Names that are not the service's own: PostgreSQL's (and every `pg_…`), MikroORM's, and the samples' database. */
const OUTSIDE_NAMES = new Set(['max_connections', 'mikro_orm_migrations', 'partner_api']);

test('every table, column, function, channel and metric the guides name (snake_case, outside the samples) is in the code', () => {
  const sources = ['adapters', 'server', 'domain', 'client']
    .flatMap((dir) => (readdirSync(join(root, dir), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => read(join(dir, f))))
    .join('\n');
  const texts = [operators, architecture].flatMap((doc) => {
    const prose = doc.replace(/```sh\n[\s\S]*?```/g, '');
    return [...prose.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g), ...prose.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1]!);
  });
  const names = new Set(texts.flatMap((t) => t.match(/(?<![\w-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w-])/g) ?? []));
  assert.ok(names.size >= 8, `only ${names.size} names found`);
  const unknown = [...names].filter((n) => !n.startsWith('pg_') && !OUTSIDE_NAMES.has(n) && !new RegExp(`\\b${n}\\b`).test(sources));
  assert.equal(unknown, []);
});

const slug = (heading: string) => heading.replaceAll('`', '').toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replaceAll(' ', '-');

test('every link of the guides leads to a file, and to a heading of it', () => {
  const problems: string[] = [];
  for (const [path, doc] of [['docs/operators.md', operators], ['docs/architecture.md', architecture]] as const) {
    for (const [, target] of doc.replace(/```[\s\S]*?```/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [file, anchor] = target!.split('#');
      const resolved = file ? join(dirname(path), file) : path;
      if (!existsSync(join(root, resolved))) { problems.push(`${path}: ${target}`); continue; }
      if (anchor && !read(resolved).split('\n').some((l) => /^#+ /.test(l) && slug(l.replace(/^#+ /, '')) === anchor)) problems.push(`${path}: ${target}`);
    }
  }
  assert.equal(problems, []);
});

test.run();
