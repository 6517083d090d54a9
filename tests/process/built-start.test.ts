import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
// @ts-expect-error: plain JavaScript (the start reads it without compiling), no types
import { builtHash, hashFile, root, sourceHash } from '../../scripts/source-hash.mjs';
import { type ServiceProcess, startScript, startService } from '../support/process.ts';
import { onPostgres, skipWhen } from '../support/skip.ts';

// `npm start` runs the build (dist/, npm run build) when it is current, else the sources under tsx: both must be the
// same service. The build is made here when it is not current (as `npm install` makes it).
const test = suite('the built start');
const ADMIN = 'built-start-admin-token-0123';
const dirs: string[] = [];
const started: ServiceProcess[] = [];
const settings = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pbi-built-'));
  dirs.push(dir);
  return {
    PGLITE_DIR: 'memory://',
    DATA_DIR: dir,
    ADMIN_TOKEN: ADMIN,
    JWT_SECRET: 'built-start-secret-0123456789-0123456789',
  };
};
test.after(async () => {
  for (const s of started) await s.stop('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** What a caller sees of an answer: status, content type and body, the request's own id taken out. */
async function seen(port: number, path: string, init: RequestInit = {}) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, init);
  const body = (await res.text())
    .replace(/"requestId":"[^"]+"/g, '"requestId":"…"')
    .replace(/"id":"[0-9a-f-]{36}"/g, '"id":"…"');
  return { status: res.status, type: res.headers.get('content-type'), body };
}

test('the scripts of npm start and npm run build use nothing newer than engines allows (import.meta.dirname is Node 20.11)', () => {
  assert.match(JSON.stringify(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines), '>=20.6');
  for (const name of readdirSync(join(root, 'scripts'))) {
    assert.not.match(readFileSync(join(root, 'scripts', name), 'utf8'), /import\.meta\.(dirname|filename)/, name);
  }
  assert.is(join(root, 'scripts'), join(fileURLToPath(import.meta.url), '..', '..', '..', 'scripts'));
});

test('npm start runs the current build, which answers as the sources under tsx do', async () => {
  if (skipWhen(onPostgres, 'the embedded pass runs it (it compares two starts, whatever the database)')) return;
  if (builtHash() !== sourceHash()) {
    const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8', timeout: 180_000 });
    assert.is(build.status, 0, build.stderr);
  }
  const built = startScript('scripts/start.mjs', settings(), { javascript: true });
  const sources = startService(settings());
  started.push(built, sources);
  const [builtPort, sourcesPort] = await Promise.all([built.listening, sources.listening]);
  assert.not.match(built.output(), /Running the TypeScript sources with tsx/);
  const admin = {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: '{"name":"Probe","role":"brand"}',
  };
  for (const [path, init] of [
    ['/openapi.json'],
    ['/healthz'],
    ['/readyz'],
    ['/v3/partner-orders'],
    ['/no-such-path'],
    ['/v3/commands', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }],
    ['/trpc/admin.accounts.create', admin],
  ] as [string, RequestInit?][]) {
    const [a, b] = await Promise.all([seen(builtPort, path, init), seen(sourcesPort, path, init)]);
    assert.equal(a, b, `${path} answers alike`);
  }
  assert.ok((await seen(builtPort, '/openapi.json')).body.length > 10_000);
});

test('a build older than the sources is not run: npm start says so in one line and runs the sources with tsx', async () => {
  if (skipWhen(onPostgres, 'the embedded pass runs it')) return;
  const current = builtHash();
  assert.ok(current, 'the test before built');
  writeFileSync(hashFile, 'an older build\n');
  try {
    const stale = startScript('scripts/start.mjs', settings(), { javascript: true });
    started.push(stale);
    await stale.listening;
    assert.match(
      stale.output(),
      /^Running the TypeScript sources with tsx: they changed since the last build \(npm run build brings it up to date\)\.$/m,
    );
  } finally {
    writeFileSync(hashFile, `${current}\n`);
  }
});

test.run();
