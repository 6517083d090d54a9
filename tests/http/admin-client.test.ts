import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createAdminClient, outcome } from '../../client/admin-client.ts';
import { ADMIN_TOKEN, listening, testApp } from '../support/app.ts';

const test = suite('the typed admin client and its example');
const root = join(import.meta.dirname, '..', '..');
let url: string;

test.before(async () => {
  const app = await testApp();
  url = await listening(app);
});

test('examples/admin-setup.ts runs as a script and prints what it made', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/admin-setup.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ADMIN_URL: url, ADMIN_TOKEN },
  });
  const made = JSON.parse(stdout);
  assert.is(made.brand.id.length, 36);
  assert.is(made.contact.id.length, 36);
  assert.equal([made.job.partnerId, made.job.status], [made.partner.id, 'accepted']);
  assert.match(made.job.name, /^O-\d{10}$/);
  assert.equal([made.config.scope, made.config.url, made.config.transformer], ['partner', null, 'partner-format']);
  assert.equal(made.refused, { code: 'CONFLICT', httpStatus: 409 });
});

test('refusals are values: a bad input with its issues, a wrong token, an unreachable service', async () => {
  const client = createAdminClient(url, ADMIN_TOKEN);
  const created = await outcome(client.admin.accounts.create.mutate({ name: 'Typed', role: 'brand' }));
  assert.ok(created.ok && created.value.id.length === 36);
  const bad = await outcome(client.admin.accounts.create.mutate({ name: '', role: 'brand' }));
  assert.ok(!bad.ok);
  assert.equal([bad.error.code, bad.error.httpStatus], ['BAD_REQUEST', 400]);
  assert.equal(
    bad.error.issues.map((i) => i.path),
    ['name'],
  );
  const intruder = await outcome(
    createAdminClient(url, 'not-the-admin-token').admin.accounts.create.mutate({ name: 'X', role: 'brand' }),
  );
  assert.equal(intruder.ok ? null : [intruder.error.code, intruder.error.httpStatus], ['UNAUTHORIZED', 401]);
  const missing = await outcome(client.admin.jobs.setStatus.mutate({ apiId: 'no-such-job', status: 'open' }));
  assert.equal(missing.ok ? null : missing.error.code, 'NOT_FOUND');
  const nowhere = await outcome(
    createAdminClient('http://127.0.0.1:1', ADMIN_TOKEN).admin.accounts.create.mutate({ name: 'X', role: 'brand' }),
  );
  assert.equal(nowhere.ok ? null : [nowhere.error.code, nowhere.error.httpStatus], ['NETWORK', null]);
});

test.run();
