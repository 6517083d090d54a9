import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startService } from '../support/process.ts';
import { onPostgres, skipWhen } from '../support/skip.ts';
import { freePort } from '../support/temp-postgres.ts';

// docs/integrators.md's "Try it on your machine", run as a reader runs it on the embedded database: the service block's
// settings, the receiver in the background, then the setup and first-steps blocks in one shell. Only the ports and
// the data folder are the test's own.
const test = suite("the integrator guide's try-it section runs as written");
const root = join(import.meta.dirname, '..', '..');
const guide = readFileSync(join(root, 'docs', 'integrators.md'), 'utf8');
const block = (name: string) => {
  const found = [...guide.matchAll(/<!-- try: ([\w-]+) -->\n```sh\n([\s\S]*?)```/g)].filter((m) => m[1] === name);
  assert.is(found.length, 1, `one "${name}" block`);
  return found[0]![2]!;
};
const dirs: string[] = [];
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("the try-it section has its four blocks, and the service block is the README's start command with settings", () => {
  assert.equal(
    [...guide.matchAll(/<!-- try: ([\w-]+) -->/g)].map((m) => m[1]),
    ['service', 'receiver', 'setup', 'first-steps'],
  );
  assert.match(block('service'), /^npm install && (\w+=\S+ )+npm start\n$/);
});

test("from nothing to verified webhooks: the order's event, the command's result and the order's change", async () => {
  if (skipWhen(onPostgres, 'the embedded pass runs it')) return; // the section is about the embedded default; its run on the first pass suffices
  const dataDir = mkdtempSync(join(tmpdir(), 'pbi-try-it-'));
  dirs.push(dataDir);
  const settings = Object.fromEntries([...block('service').matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
  const service = startService({ ...settings, PGLITE_DIR: 'memory://', DATA_DIR: dataDir });
  const env = {
    PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? '',
    DATA_DIR: dataDir,
  };
  const hooksPort = await freePort();
  const receiver = spawn('bash', ['-c', `set -euo pipefail\n${block('receiver')}`], {
    cwd: root,
    env: { ...env, PORT: String(hooksPort) },
    detached: true,
  });
  let received = '';
  receiver.stdout.on('data', (d: Buffer) => {
    received += d;
  });
  receiver.stderr.on('data', (d: Buffer) => {
    received += d;
  });
  try {
    const port = await service.listening;
    for (let waited = 0; !received.includes('receiving webhooks'); waited += 100) {
      assert.ok(waited < 30_000, `the receiver did not start:\n${received}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const script = `${block('setup')}\n${block('first-steps')}`
      .replaceAll('localhost:3000', `127.0.0.1:${port}`)
      .replaceAll('localhost:4000', `127.0.0.1:${hooksPort}`);
    const run = spawnSync('bash', ['-c', `set -euo pipefail\n${script}`], {
      cwd: root,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    assert.is(
      run.status,
      0,
      `the steps stopped (exit ${run.status}):\n${output.slice(-3000)}\n--- service:\n${service.output().slice(-2000)}`,
    );
    // What the page shows the steps print, as they print it (the timestamp aside).
    for (const line of block('first-steps')
      .split('\n')
      .filter((l) => l.startsWith('# '))) {
      const shown = line.slice(2).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/, '');
      assert.ok(output.includes(shown), `the output lacks "${shown}":\n${output}`);
    }
    for (let waited = 0; (received.match(/^verified /gm) ?? []).length < 3; waited += 100) {
      assert.ok(waited < 20_000, `the receiver verified too few events:\n${received}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.not.match(received, /^refused/m);
    assert.match(received, /^verified OrderStatusEvent [0-9a-f-]{36} \{.*"orderId":"my-first-order".*"status":"new"/m);
    assert.match(received, /^verified CommandResultEvent [0-9a-f-]{36} \{.*"result":\{"orderId":"my-first-order"\}/m);
    assert.match(received, /^verified OrderStatusEvent [0-9a-f-]{36} \{.*"externalId":"my-ref-1"/m);
  } finally {
    try {
      process.kill(-receiver.pid!, 'SIGKILL');
    } catch {
      /* ended */
    }
    await service.stop();
  }
});

test.run();
