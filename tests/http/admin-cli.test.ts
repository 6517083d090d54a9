import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../../client/cli.ts';
import { ADMIN_TOKEN, listening } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';
import { startReceiver } from '../support/receiver.ts';

// Every command of `npm run admin`: a success in both output modes, a refusal (exit 1) and a usage error (exit 2).
const test = suite('the admin CLI');
const root = join(import.meta.dirname, '..', '..');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Json = Record<string, any>;
let app: App;
let env: Record<string, string>;

test.before(async () => {
  app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '50ms' });
  app.worker.start();
  env = { ADMIN_URL: await listening(app), ADMIN_TOKEN };
});
test.after(() => app.worker.stop());

async function cli(args: string, environment = env) {
  let out = '';
  let err = '';
  const argv = args.match(/'[^']*'|\S+/g)!.map((a) => a.replace(/^'|'$/g, ''));
  const code = await runCli(argv, environment, {
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      err += t;
    },
  });
  return { code, out, err };
}
/**
 * Runs a command in both modes, --json first (its answer parsed), then as a table. A command that must not run twice
 * alike (a create of something unique) gets its arguments per mode.
 */
async function both(args: string | ((json: boolean) => string)) {
  const argsOf = typeof args === 'string' ? () => args : args;
  const json = await cli(`--json ${argsOf(true)}`);
  assert.is(json.code, 0, `--json ${argsOf(true)}: ${json.err}`);
  const table = await cli(argsOf(false));
  assert.is(table.code, 0, `${argsOf(false)}: ${table.err}`);
  assert.match(table.out, /[┌│]/, `${argsOf(false)}: a table`);
  return { table: table.out, value: JSON.parse(json.out) };
}
const refused = async (args: string, pattern: RegExp) => {
  const r = await cli(args);
  assert.is(r.code, 1, `${args}: ${r.out}${r.err}`);
  assert.match(r.err, pattern, args);
};
const usage = async (args: string) => {
  const r = await cli(args);
  assert.is(r.code, 2, `${args}: ${r.out}${r.err}`);
  assert.ok(r.err.length > 0, `${args}: says why`);
};

test('accounts, contacts and webhook configurations', async () => {
  const { value: brand, table } = await both(`accounts create --name 'CLI Brand' --role brand`);
  assert.match(table, /id/);
  assert.is(brand.id.length, 36);
  const { value: partner } = await both('accounts create --name Installer --role partner');
  await refused(
    `accounts create --name Child --role partner --parent ${randomUUID()}`,
    /BAD_REQUEST[\s\S]*parentId: The master account does not exist/,
  );
  await usage('accounts create --name Nobody');
  await usage('accounts create --name Nobody --role admin');

  const email = `cli-${randomUUID().slice(0, 8)}@example.com`;
  const { value: contact } = await both(
    (json) => `contacts create --account ${partner.id} --email ${json ? email : `table-${email}`} --no-api-access`,
  );
  await refused(`contacts create --account ${partner.id} --email ${email}`, /CONFLICT/);
  await usage(`contacts create --account ${partner.id}`);
  const { value: access } = await both(`contacts access ${contact.id} on`);
  assert.equal(access, { ok: true });
  await refused(`contacts access ${randomUUID()} off`, /NOT_FOUND/);
  await usage(`contacts access ${contact.id} maybe`);

  const { value: config } = await both(
    `webhooks set --account ${brand.id} --scope brand --transformer default --url https://hooks.example.com/cli --key cli-signing-key-0123456789`,
  );
  assert.equal([config.url, config.hasSignatureKey, config.enabled], ['https://hooks.example.com/cli', true, true]);
  await refused(
    `webhooks set --account ${brand.id} --scope brand --transformer default --url ftp://hooks.example.com`,
    /BAD_REQUEST/,
  );
  await usage(`webhooks set --account ${brand.id} --scope other --transformer default`);

  const { value: rotated, table: rotatedTable } = await both(
    `webhooks rotate-key --account ${brand.id} --scope brand --key cli-signing-key-2026-11-27 --previous-valid-for 3600`,
  );
  assert.equal(
    [rotated.hasSignatureKey, Date.parse(rotated.previousKeyExpiresAt) - Date.now() > 3_500_000],
    [true, true],
    'the previous key stays valid for an hour',
  );
  assert.match(rotatedTable, /previousKeyExpiresAt/);
  const { value: made } = await both(`webhooks rotate-key --account ${brand.id} --scope brand --previous-valid-for 0`);
  assert.match(made.signatureKey, /^whsec_[A-Za-z0-9+/]{43}=$/, 'without --key, a key is made and shown once');
  await refused(
    `webhooks rotate-key --account ${partner.id} --scope partner --key cli-signing-key-2026-11-27`,
    /NOT_FOUND/,
  );
  await refused(`webhooks rotate-key --account ${brand.id} --scope brand --key short`, /BAD_REQUEST/);
  await usage(
    `webhooks rotate-key --account ${brand.id} --scope brand --key cli-signing-key-2026-11-27 --previous-valid-for soon`,
  );
  assert.is((await cli(`webhooks set --account ${partner.id} --scope partner --transformer partner-format`)).code, 0);
  await refused(
    `webhooks rotate-key --account ${partner.id} --scope partner --key cli-signing-key-2026-11-27`,
    /CONFLICT/,
  );
  // The operator is told the command that fixes it, not the integrator's PUT.
  const conflict = await cli(
    `webhooks rotate-key --account ${partner.id} --scope partner --key cli-signing-key-2026-11-27`,
  );
  assert.match(conflict.err, `webhooks rotate-key --account ${partner.id} --scope partner without --key`);
  const { value: taken } = await both(`webhooks rotate-key --account ${partner.id} --scope partner`);
  assert.match(taken.signatureKey, /^whsec_/, 'the advice works: without --key, a configuration without one takes one');
  assert.not.match(conflict.err, 'PUT /v3/webhook-config');
  const pair = await cli(`webhooks rotate-key --account ${brand.id} --scope brand --asymmetric`);
  assert.is(pair.code, 1, pair.out);
  assert.match(pair.err, /CONFLICT[\s\S]*asymmetricSigning: true/);
  assert.not.match(pair.err, 'PUT /v3/webhook-config');
});

test('jobs, cancellation reasons and order mappings', async () => {
  const brand = (await cli('--json accounts create --name B --role brand')).out;
  const partner = (await cli('--json accounts create --name P --role partner')).out;
  const [brandId, partnerId] = [JSON.parse(brand).id, JSON.parse(partner).id];
  const { value: job } = await both(`jobs create --brand ${brandId} --status accepted`);
  assert.equal([job.status, job.partnerId], ['accepted', null]);
  const { value: assigned } = await both(`jobs assign ${job.apiId} ${partnerId}`);
  assert.is(assigned.partnerId, partnerId);
  const { value: started } = await both(`jobs status ${job.apiId} started`);
  assert.is(started.status, 'started');
  await refused(`jobs status no-such-job-${randomUUID()} open`, /NOT_FOUND/);
  await refused(`jobs status ${job.apiId} flying`, /BAD_REQUEST/);
  await usage(`jobs assign ${job.apiId}`);

  const reason = `CLI_${randomUUID().slice(0, 8).toUpperCase()}`;
  assert.equal((await both(`reasons set ${reason} pending`)).value, { ok: true });
  await refused(`reasons set ${'X'.repeat(65)} cancelled`, /BAD_REQUEST/);
  await usage(`reasons set ${reason} maybe`);

  const dir = mkdtempSync(join(tmpdir(), 'pbi-cli-'));
  const good = join(dir, 'mapping.json');
  writeFileSync(
    good,
    JSON.stringify([
      { key: 'first_name', target: 'customer.firstName', required: true },
      { key: 'city', target: 'shippingAddress.city' },
    ]),
  );
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, JSON.stringify({ fields: [{ key: 'x', target: 'no.such.field' }] }));
  assert.equal((await both(`mappings set --brand ${brandId} --file ${good}`)).value, { ok: true });
  await refused(`mappings set --brand ${brandId} --file ${bad}`, /BAD_REQUEST|no\.such\.field/);
  await usage(`mappings set --brand ${brandId} --file ${join(dir, 'missing.json')}`);
});

test('deliveries: list, redeliver one, redeliver the failed; commands by account and _cid', async () => {
  let healthy = false;
  const receiver = await startReceiver(() => (healthy ? 200 : 500));
  const brand = await integrator(app, 'brand');
  await cli(
    `webhooks set --account ${brand.accountId} --scope brand --transformer default --url ${receiver.url('/cli')}`,
  );
  const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
  let failed: Json[] = [];
  for (let i = 0; i < 100 && failed.length === 0; i++) {
    failed = JSON.parse((await cli(`--json deliveries list --account ${brand.accountId} --status failed`)).out);
    if (failed.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.is(failed.length, 1, 'the delivery failed');
  const { table } = await both(`deliveries list --account ${brand.accountId} --limit 5`);
  assert.match(table, /failed/);
  await usage('deliveries list --limit 0');
  // An id of another shape names no account: its deliveries are none (CONTRACT §3), not everyone's and not an error.
  const none = await cli('--json deliveries list --account not-an-id');
  assert.equal([none.code, JSON.parse(none.out)], [0, []]);

  healthy = true;
  assert.equal((await both(`deliveries redeliver ${failed[0]!.id}`)).value, { ok: true });
  await receiver.until((r) => r.some((x) => x.answered === 200 && x.payload.orderId === apiId));
  await refused(`deliveries redeliver ${randomUUID()}`, /NOT_FOUND/);
  healthy = false;
  await app.admin.call('jobs.setStatus', { apiId, status: 'open' });
  for (let i = 0; i < 100; i++) {
    if (JSON.parse((await cli(`--json deliveries list --account ${brand.accountId} --status failed`)).out).length === 1)
      break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  healthy = true;
  const { value: replayed } = await both(
    `deliveries redeliver-failed --account ${brand.accountId} --since 2020-01-01T00:00:00Z`,
  );
  assert.ok(
    replayed.count >= 1,
    `${JSON.stringify(replayed)} ${(await cli(`deliveries list --account ${brand.accountId}`)).out}`,
  );
  await usage(`deliveries redeliver-failed --account ${brand.accountId}`);
  await refused(`deliveries redeliver-failed --account ${brand.accountId} --since yesterday`, /BAD_REQUEST/);

  const cid = randomUUID();
  const sent = await app.http
    .post('/v3/commands')
    .set('authorization', `Bearer ${brand.accessToken}`)
    .send({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: apiId });
  assert.is(sent.status, 202);
  let command: Json = {};
  for (let i = 0; i < 100 && command.status !== 'succeeded'; i++) {
    command = JSON.parse((await cli(`--json commands get --account ${brand.accountId} --cid ${cid}`)).out);
    if (command.status !== 'succeeded') await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(
    [command.status, command.result._type, command.result.result],
    ['succeeded', 'CommandResultEvent', { orderId: apiId }],
  );
  assert.match((await both(`commands get --account ${brand.accountId} --cid ${cid}`)).table, /succeeded/);
  await refused(`commands get --account ${brand.accountId} --cid no-such-cid`, /NOT_FOUND/);
  await usage(`commands get --account ${brand.accountId}`);
});

test('help, the environment, a wrong token; and the npm script itself', async () => {
  const help = await cli('--help');
  assert.is(help.code, 0);
  for (const name of ['accounts', 'contacts', 'webhooks', 'jobs', 'reasons', 'mappings', 'deliveries', 'commands'])
    assert.match(help.out, new RegExp(`\\b${name}\\b`));
  const sub = await cli('deliveries redeliver-failed --help');
  assert.equal(
    [sub.code, /--since/.test(sub.out), /--json/.test(sub.out)],
    [0, true, true],
    "a command's help shows its options and --json",
  );
  assert.is((await cli('help jobs')).code, 0);
  const badUrl = await cli('accounts create --name X --role brand', { ...env, ADMIN_URL: 'localhost:3000' });
  assert.equal([badUrl.code, /ADMIN_URL/.test(badUrl.err)], [2, true]);
  const down = await cli('accounts create --name X --role brand', { ...env, ADMIN_URL: 'http://127.0.0.1:1' });
  assert.equal([down.code, /NETWORK/.test(down.err)], [1, true]);
  await usage('no-such-command');
  const untokened = await cli('accounts create --name X --role brand', { ADMIN_URL: env.ADMIN_URL! });
  assert.equal([untokened.code, /ADMIN_TOKEN/.test(untokened.err)], [2, true]);
  const wrong = await cli('accounts create --name X --role brand', { ...env, ADMIN_TOKEN: 'not-the-admin-token' });
  assert.equal([wrong.code, /UNAUTHORIZED/.test(wrong.err)], [1, true]);

  const run = promisify(execFile);
  const { stdout } = await run(
    'npm',
    ['run', '-s', 'admin', '--', '--json', 'accounts', 'create', '--name', 'Via npm', '--role', 'brand'],
    { cwd: root, env: { ...process.env, ...env } },
  );
  assert.is(JSON.parse(stdout).id.length, 36);
  const failing = await run('npm', ['run', '-s', 'admin', '--', 'jobs', 'status', 'no-such-job', 'open'], {
    cwd: root,
    env: { ...process.env, ...env },
  }).then(
    () => 0,
    (e: { code: number }) => e.code,
  );
  assert.is(failing, 1, 'the exit code reaches the shell');
  const full = JSON.parse((await cli('--json deliveries list --limit 1')).out) as Json[];
  assert.ok(full.length === 0 || Array.isArray(full[0]!.attempts), '--json gives every delivery whole');
});

test.run();
