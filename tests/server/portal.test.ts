// The portal as the service serves it, and the API types it is built on (no browser: tests/browser/ has those).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import supertest from 'supertest';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PORTAL_CSP, portalRoutes } from '../../server/http/portal.ts';
import { document } from '../support/app.ts';

const test = suite('portal: served files, and API types from the current document');
const root = join(import.meta.dirname, '..', '..');

test('portal/src/api/schema.d.ts is generated from the document the service serves now (npm run portal:api-types)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'portal-types-'));
  writeFileSync(join(dir, 'openapi.json'), `${JSON.stringify(document(), null, 2)}\n`);
  execFileSync(
    join(root, 'portal', 'node_modules', '.bin', 'openapi-typescript'),
    [join(dir, 'openapi.json'), '-o', join(dir, 'schema.d.ts')],
    { stdio: 'ignore' },
  );
  const kept = join(root, 'portal', 'src', 'api', 'schema.d.ts');
  assert.ok(
    existsSync(kept) && readFileSync(join(dir, 'schema.d.ts'), 'utf8') === readFileSync(kept, 'utf8'),
    "the portal's API types are missing or stale: run npm run portal:api-types (npm test and npm run typecheck do), then fix what the portal's type check finds",
  );
});

function served(dist: string, localMail = true) {
  const app = express();
  app.use(portalRoutes({ localMail }, dist));
  return supertest(app);
}

test('the page: a strict Content-Security-Policy, never stored; hashed files cached a year; /portal goes to /portal/', async () => {
  const dist = mkdtempSync(join(tmpdir(), 'portal-dist-'));
  execFileSync('mkdir', ['-p', join(dist, 'assets')]);
  writeFileSync(join(dist, 'index.html'), '<!doctype html><html><head><title>x</title></head></html>');
  writeFileSync(join(dist, 'assets', 'index-abc123.js'), 'console.log(1)');
  const http = served(dist);
  const page = await http.get('/portal/');
  assert.is(page.status, 200);
  assert.match(
    page.text,
    '<head><meta name="mail-delivery" content="file"><title>',
    'without SMTP_URL the page knows mail stays local',
  );
  assert.match((await served(dist, false).get('/portal/')).text, '<meta name="mail-delivery" content="smtp">');
  assert.is(page.headers['content-security-policy'], PORTAL_CSP);
  assert.match(PORTAL_CSP, /default-src 'none'/);
  assert.not.match(PORTAL_CSP, /unsafe-inline|unsafe-eval/);
  assert.is(page.headers['cache-control'], 'no-store');
  const asset = await http.get('/portal/assets/index-abc123.js');
  assert.is(asset.status, 200);
  assert.is(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.is(asset.headers['x-content-type-options'], 'nosniff');
  assert.is((await http.get('/portal/assets/missing.js')).status, 404);
  const bare = await http.get('/portal');
  assert.is(bare.status, 301);
  assert.is(bare.headers.location, '/portal/');
});

test('without a build, the page says how to make one (503)', async () => {
  const res = await served(join(tmpdir(), 'no-such-portal-build')).get('/portal/');
  assert.is(res.status, 503);
  assert.match(res.text, /npm run portal:build/);
});

test.run();
