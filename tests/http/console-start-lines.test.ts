// What the console says as the service starts: the start line (the role, the database, where the data lives), the
// ready line, and whether its lines are for people or JSON (LOG_FORMAT).
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../server/config.ts';
import { readyLine, startLine } from '../../server/console-lines.ts';

const test = suite('the console: the start and ready lines');

test('the start line names the role and the database, the data folder or the server without its password, and a missing ADMIN_TOKEN', () => {
  const embedded = startLine(loadConfig({ PGLITE_DIR: '/srv/partner-api/pglite' }));
  assert.is(
    embedded.message,
    'starting the API and the worker on the embedded database in /srv/partner-api/pglite; ' +
      'ADMIN_TOKEN is not set, so admin calls are refused (set it, 16 characters or more, to enable them)',
  );
  assert.equal(embedded.fields, {
    role: 'all',
    database: 'embedded',
    dataFolder: '/srv/partner-api/pglite',
    adminToken: 'not set',
  });

  const server = startLine(
    loadConfig({
      SERVICE_ROLE: 'worker',
      DATABASE_URL: 'postgres://app:hunter2-secret@db.internal:6543/partner_api',
      ADMIN_TOKEN: 'an-admin-token-0123456789',
    }),
  );
  assert.is(server.message, 'starting the worker on PostgreSQL at db.internal:6543/partner_api');
  assert.equal(server.fields, { role: 'worker', database: 'postgresql', server: 'db.internal:6543/partner_api' });
  assert.not.match(JSON.stringify(server), 'hunter2');
  assert.not.match(JSON.stringify(server), 'an-admin-token');
  assert.match(
    startLine(loadConfig({ PGLITE_DIR: 'memory://' })).message,
    'the embedded database, in memory (nothing is kept)',
  );
});

test('the embedded database lives in DATA_DIR/pglite unless PGLITE_DIR says otherwise; one an earlier default left in ./.data stays, and the start line says so', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pbi-folders-'));
  try {
    checkFolders(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function checkFolders(dir: string) {
  const made = (folder: string) => {
    mkdirSync(join(dir, folder), { recursive: true });
    writeFileSync(join(dir, folder, 'PG_VERSION'), '17\n');
  };
  // Synchronous from chdir to chdir: nothing else runs meanwhile. ./.data is read from the working directory.
  const here = process.cwd();
  const config = (env: Record<string, string>) => {
    process.chdir(dir);
    try {
      return loadConfig(env);
    } finally {
      process.chdir(here);
    }
  };
  const at = (env: Record<string, string>) => {
    const c = config(env);
    return [c.pgliteDir.slice(realpathSync(dir).length), c.pgliteDirOfOldDefault] as const;
  };
  assert.equal(at({}), ['/.data/pglite', false]);
  assert.equal(at({ DATA_DIR: 'state' }), ['/state/pglite', false]);
  assert.equal(at({ DATA_DIR: 'state', PGLITE_DIR: 'db' }), ['/db', false]);
  made('.data/pglite');
  assert.equal(at({ DATA_DIR: 'state' }), ['/state/pglite', false], 'a DATA_DIR not made yet is a new place');
  mkdirSync(join(dir, 'state'));
  assert.equal(at({ DATA_DIR: 'state' }), ['/state/pglite', false], 'so is an empty one');
  mkdirSync(join(dir, 'state', 'pglite'));
  mkdirSync(join(dir, 'state', 'pglite.lock'));
  writeFileSync(join(dir, 'state', 'pglite.creating'), '');
  assert.equal(
    at({ DATA_DIR: 'state' }),
    ['/state/pglite', false],
    'so is one where a first start was interrupted while it created the database',
  );
  writeFileSync(join(dir, 'state', 'jwt-secret'), 'a key');
  assert.equal(
    at({ DATA_DIR: 'state' }),
    ['/.data/pglite', true],
    'a deployment of an earlier version keeps the database it made',
  );
  const line = startLine(config({ DATA_DIR: 'state', ADMIN_TOKEN: 'an-admin-token-0123456789' }));
  assert.match(
    line.message,
    `it stays where earlier versions made it, not in DATA_DIR (${realpathSync(dir)}/state): set PGLITE_DIR=${realpathSync(dir)}/.data/pglite`,
  );
  assert.is(line.fields.dataFolderOf, 'an earlier default');
  assert.equal(at({}), ['/.data/pglite', false], 'the default DATA_DIR holds it anyway');
  made('state/pglite');
  assert.equal(at({ DATA_DIR: 'state' }), ['/state/pglite', false], 'once DATA_DIR has one, that one');
  assert.not.match(startLine(config({ DATA_DIR: 'state' })).message, 'earlier versions');
}

test('the ready line names the URL, /portal and /docs, with the port and the role first', () => {
  const ready = readyLine({ role: 'all' }, 3456);
  assert.is(
    ready.message,
    'ready: http://localhost:3456 (integrator portal: http://localhost:3456/portal, API reference: http://localhost:3456/docs)',
  );
  assert.match(JSON.stringify(ready.fields), /^\{"port":3456,"role":"all","url":"http:\/\/localhost:3456"/);
  assert.is(
    readyLine({ role: 'worker' }, 3100).message,
    'ready: the worker runs; health at http://localhost:3100/readyz',
  );
});

test('LOG_FORMAT: pretty on a terminal, JSON elsewhere, either when forced; any other value refused in one sentence', () => {
  assert.is(loadConfig({}, true).logFormat, 'pretty');
  assert.is(loadConfig({}, false).logFormat, 'json');
  assert.is(loadConfig({ LOG_FORMAT: 'json' }, true).logFormat, 'json');
  assert.is(loadConfig({ LOG_FORMAT: 'pretty' }, false).logFormat, 'pretty');
  try {
    loadConfig({ LOG_FORMAT: 'xml' });
    assert.unreachable('xml was taken');
  } catch (error) {
    assert.instance(error, ConfigError);
    assert.is(
      (error as Error).message,
      'Invalid settings:\n  LOG_FORMAT: must be pretty (lines for people) or json (a JSON object a line)',
    );
  }
});

test.run();
