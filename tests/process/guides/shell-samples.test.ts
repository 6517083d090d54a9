import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { skipUnless } from '../../support/skip.ts';
import { helpers, localize, runScript, samples, server } from './sample-runner.ts';
import { operators, root } from './support.ts';

// docs/operators.md: every shell sample runs as written (a fresh folder per sample; the samples marked for PostgreSQL
// on the suite's second pass, in a database of this test's own).
const test = suite('the operators guide: the shell samples');

interface Expectation {
  /** What the sample's output (its stdout and stderr) must show. */
  shows: (string | RegExp)[];
  /** Checks after the sample, in the folder it ran in. */
  after?: (run: { dir: string; database: string | null }) => Promise<void>;
}

const withDatabase = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};
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
    shows: [
      /schema up to date \(postgresql\): Migration20261122000000_initial, /,
      '{"status":"ready"}',
      '{"status":"ok"}',
    ],
    after: async ({ dir }) => {
      const roles = readdirSync(join(dir, 'log', 'partner-api')).map(
        (f) =>
          /"port":\d+,"role":"(\w+)"[^\n]*"msg":"ready: /.exec(
            readFileSync(join(dir, 'log', 'partner-api', f), 'utf8'),
          )?.[1],
      );
      assert.equal(roles.sort(), ['api', 'api', 'worker']);
    },
  },
  'health-and-shutdown': {
    shows: [
      '{"status":"ok"}',
      '{"status":"ready"}',
      '"msg":"stopped"',
      server
        ? '"msg":"shutting down: every process drains"'
        : '"msg":"shutting down: no new connections, finishing requests under way"',
    ],
  },
  'shared-limits': { shows: [/^\d+: 200\n\d+: 200\n\d+: 429$/m] },
  metrics: {
    shows: [
      /^401$/m,
      /^commands_oldest_accepted_age_seconds \d/m,
      /^webhook_deliveries_oldest_pending_age_seconds \d/m,
      server ? /^db_pool_connections\{state="max"\} 60$/m : /^db_pool_connections\{state="max"\} 1$/m,
    ],
  },
  cluster: {
    shows: [
      new RegExp(
        String.raw`"msg":"ready: http://localhost:\d+ \(integrator portal: http://localhost:\d+/portal, ` +
          String.raw`API reference: http://localhost:\d+/docs\); 2 API processes and a worker, ` +
          String.raw`at most 60 database connections \(20 each\)"`,
      ),
      /^db_pool_connections\{state="max"\} 60$/m,
      /^4$/m,
    ],
  },
  autovacuum: { shows: [/^(on|off)$/m, 'n_dead_tup', 'VACUUM'] },
  'partition-history': {
    shows: [
      /rows before \S+ stay in one partition of the past/,
      /Migration20261130000000_history_partitions, Migration20261130010000_history_upkeep\b/,
    ],
    after: async ({ database }) => {
      const legacy = await query<{ name: string }>(
        withDatabase(server!, `${database}_old`),
        'select name from history_partitions where lower is null order by name',
      );
      assert.equal(
        legacy.map((r) => r.name),
        ['deliveries_legacy', 'delivery_attempts_legacy', 'events_legacy'],
        'each old table is the partition of the past of its new one',
      );
    },
  },
  'backup-postgres': {
    shows: ['setval', /schema up to date \(postgresql\): Migration20261122000000_initial, /],
    after: async ({ database }) => {
      const original = withDatabase(server!, database!);
      const restored = withDatabase(server!, `${database}_restored`);
      const tables = (url: string) =>
        query<{ t: string }>(url, `select tablename as t from pg_tables where schemaname = 'public' order by 1`);
      assert.equal(await tables(restored), await tables(original), 'the restored database has the same tables');
      const migrations = (url: string) =>
        query<{ name: string }>(url, 'select name from mikro_orm_migrations order by name');
      assert.equal(await migrations(restored), await migrations(original));
      const [position] = await query<{ last_value: string }>(
        restored,
        'select last_value from event_feed_position_seq',
      );
      assert.ok(Number(position!.last_value) >= 1_000_000_000, 'the feed positions moved on');
    },
  },
  'backup-embedded': {
    shows: ['{"status":"ready"}'],
    after: async ({ dir }) => {
      assert.ok(existsSync(join(dir, 'backups', 'partner-api.tar.gz')));
      assert.ok(
        existsSync(join(dir, 'lib', 'partner-api-restored', 'jwt-secret')),
        'the generated key came back with the data',
      );
      assert.ok(readdirSync(join(dir, 'lib', 'partner-api-restored', 'pglite')).length > 0);
    },
  },
  'rotate-jwt-secret': { shows: [/^200\n200\n401$/m] },
  'rotate-signature-key': {
    shows: [
      '"scope":"partner"',
      '"enabled":true',
      '"hasSignatureKey":true',
      /"previousKeyExpiresAt":"\d{4}-\d\d-\d\dT[\d:.]+Z"/,
    ],
  },
  'embedded-one-process': {
    shows: [
      /The embedded database in \S+ is in use by another process[\s\S]*exit code 1[\s\S]*SERVICE_ROLE: "worker" needs DATABASE_URL[\s\S]*exit code 1/,
    ],
  },
};

test('every code block of docs/operators.md is a shell sample that this test runs, with checks of its own', () => {
  const fences = [...operators.matchAll(/^```(\w*)$/gm)].map((m) => m[1]);
  const opened = fences.filter((_, i) => i % 2 === 0);
  assert.equal(
    opened.filter((lang) => lang !== 'sh'),
    [],
    'code blocks that are not shell samples',
  );
  assert.is(samples.length, opened.length, 'a shell sample without its <!-- operators: … --> marker');
  assert.ok(helpers, 'the helpers sample');
  assert.equal(
    samples
      .map((s) => s.id)
      .filter((id) => id !== 'helpers')
      .sort(),
    Object.keys(expectations).sort(),
  );
  assert.ok(
    samples.some((s) => s.only === 'postgres') &&
      samples.some((s) => s.only === 'embedded') &&
      samples.some((s) => s.only === null),
  );
});

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
  for (const { datname } of await query<{ datname: string }>(
    admin,
    `select datname from pg_database where datname like '${database}%'`,
  )) {
    await query(admin, `drop database if exists ${pg.escapeIdentifier(datname)} with (force)`);
  }
});

for (const sample of samples.filter((s) => s.id !== 'helpers')) {
  const runs = sample.only === null || (sample.only === 'postgres') === Boolean(server);
  test(`docs/operators.md runs as written: ${sample.id}`, async () => {
    if (skipUnless(runs, sample.only === 'postgres' ? 'needs PostgreSQL (DATABASE_URL)' : 'the embedded pass runs it'))
      return;
    const dir = mkdtempSync(join(tmpdir(), `pbi-guides-${sample.id}-`));
    dirs.push(dir);
    for (const folder of ['lib', 'log', 'backups']) mkdirSync(join(dir, folder));
    const env: Record<string, string> = {
      PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME ?? '',
      ...(server && database && { DATABASE_URL: withDatabase(server, database) }),
    };
    const { status, output, leftovers } = await runScript(await localize(sample.code, dir, database), env);
    const logs = existsSync(join(dir, 'log', 'partner-api'))
      ? readdirSync(join(dir, 'log', 'partner-api'))
          .map((f) => `--- ${f}\n${readFileSync(join(dir, 'log', 'partner-api', f), 'utf8').slice(-1500)}`)
          .join('\n')
      : '';
    assert.is(status, 0, `the sample stopped (exit ${status}):\n${output.slice(-3000)}\n${logs}`);
    assert.not.ok(leftovers, `the sample left processes running:\n${output.slice(-2000)}`);
    for (const shown of expectations[sample.id]!.shows) {
      assert.ok(
        typeof shown === 'string' ? output.includes(shown) : shown.test(output),
        `the output lacks ${String(shown)}:\n${output.slice(-3000)}`,
      );
    }
    await expectations[sample.id]!.after?.({ dir, database });
  });
}

test.run();
