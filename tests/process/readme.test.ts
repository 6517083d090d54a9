import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startService } from '../support/process.ts';
import { freePort } from '../support/temp-postgres.ts';

// The README's walk-throughs, run as a reader would run them: each scenario's start line gives the settings, and its
// blocks run in order in one shell against that service. Only the port, and folders of the test's own, differ.
const test = suite('the README walk-throughs run as written');
const root = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const dirs: string[] = [];
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Every ```sh block, with the marker before it, if any. */
const allBlocks = () => [...readme.matchAll(/(?:<!-- ([\w-]+)(?:: ([\w-]+))? -->\n)?```sh\n([\s\S]*?)```/g)];

/** The ```sh block after each `<!-- name[: kind] -->` marker. */
function blocks(name: string) {
  return [...readme.matchAll(/<!-- ([\w-]+)(?:: ([\w-]+))? -->\n```sh\n([\s\S]*?)```/g)]
    .filter((m) => m[1] === name)
    .map((m) => ({ kind: m[2] ?? 'run', code: m[3]! }));
}

function startSettings(code: string): Record<string, string> {
  const line = code.split('\n').find((l) => /\bnpm start\b/.test(l));
  assert.ok(line, 'no start line');
  return Object.fromEntries([...line.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

/** The members the README shows in its answers (`# {"a":…,"b":…}` lines): each must be in what the service answered. */
const shownKeys = (code: string) =>
  new Set(
    code
      .split('\n')
      .filter((l) => l.trimStart().startsWith('#'))
      .flatMap((l) => [...l.matchAll(/"(\w+)":/g)].map((m) => m[1]!)),
  );

async function runScenario(name: string) {
  const all = blocks(name);
  const start = all.find((b) => b.kind === 'start');
  assert.ok(start, `no start block for ${name}`);
  const dataDir = mkdtempSync(join(tmpdir(), `pbi-readme-${name}-`));
  dirs.push(dataDir);
  const service = startService({ ...startSettings(start.code), PGLITE_DIR: 'memory://', DATA_DIR: dataDir });
  try {
    const port = await service.listening;
    const script = all
      .filter((b) => b.kind !== 'start')
      .map(
        (b) =>
          // Blocks that show a refusal run as they are; the others must not meet a failing status anywhere.
          (b.kind === 'refused' ? 'unset -f curl\n' : 'curl() { command curl --fail-with-body "$@"; }\n') + b.code,
      )
      .join('\n');
    const shell = script
      .replaceAll('localhost:3000', `127.0.0.1:${port}`)
      .replaceAll('HOOKS_PORT=4000', `HOOKS_PORT=${await freePort()}`);
    // Background jobs of the walk-through (its webhook receiver) end with it, whatever happens.
    const run = spawnSync(
      'bash',
      ['-c', `set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${shell}`],
      {
        cwd: root,
        env: {
          PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
          HOME: process.env.HOME ?? '',
          DATA_DIR: dataDir,
        },
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    const output = `${run.stdout}\n${run.stderr}`;
    assert.is(
      run.status,
      0,
      `the ${name} walk-through stopped (exit ${run.status}):\n${output.slice(-3000)}\n--- service:\n${service.output().slice(-2000)}`,
    );
    const missing = [...new Set(all.flatMap((b) => [...shownKeys(b.code)]))].filter(
      (key) => !output.includes(`"${key}":`),
    );
    assert.equal(missing, [], 'members the README shows that the answers lack');
    return output;
  } finally {
    await service.stop();
    rmSync(join(root, 'hooks.log'), { force: true });
  }
}

test("the first start's lines the README shows count the migrations there are", async () => {
  const { migrationsList } = await import('../../adapters/persistence/migrations/index.ts');
  assert.match(readme, `INFO: migrating the schema: ${migrationsList.length} migrations to apply`);
});

test('every curl example of the README is in a walk-through the tests run', () => {
  const unrun = allBlocks()
    .filter((m) => !m[1] && /\bcurl\b/.test(m[3]!))
    .map((m) => m[3]!.split('\n')[0]);
  assert.equal(unrun, []);
});

test('from a fresh clone to an account, a login, a configuration without its key, listings and a partner command', async () => {
  const output = await runScenario('walkthrough');
  assert.match(output, '"hasSignatureKey":false');
  assert.match(output, '"total":3');
  assert.match(output, '"status":"succeeded"');
  assert.match(output, '"code":"UNAUTHORIZED"');
  assert.match(output, '"code":"UNKNOWN_CANCELLATION_REASON"');
  assert.match(output, '"externalId":"SHOP-88231"');
  assert.match(
    output,
    /[0-9a-f-]{36} \{"_eid":"[0-9a-f-]{36}","_type":"OrderStatusEvent"/,
    'the receiver got the webhooks',
  );
});

test('the demo data walk-through', async () => {
  const output = await runScenario('demo');
  assert.match(output, '"status":"ready"');
  assert.match(output, '"items":[');
});

test.run();
