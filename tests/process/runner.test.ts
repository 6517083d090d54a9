import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const test = suite('the test runner (tests/run.ts)');
const root = join(import.meta.dirname, '..', '..');
const dirs: string[] = [];
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * Runs a copy of tests/run.ts over just these suite files (a stub in place of the shared database); its exit and
 * output.
 */
function runSuites(files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'pbi-runner-'));
  dirs.push(dir);
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  mkdirSync(join(dir, 'tests', 'support'), { recursive: true });
  copyFileSync(join(root, 'tests', 'run.ts'), join(dir, 'tests', 'run.ts'));
  copyFileSync(join(root, 'tests', 'support', 'skip.ts'), join(dir, 'tests', 'support', 'skip.ts'));
  writeFileSync(join(dir, 'tests', 'support', 'shared.ts'), 'export async function closeShared() {}\n');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, 'tests', name), text);
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(dir, 'tests', 'run.ts')], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
  });
  const lines = run.stdout.split('\n').filter((l) => l.trim() !== '');
  return {
    status: run.status,
    lastLine: lines.at(-1),
    lineBefore: lines.at(-2),
    output: `${run.stdout}\n${run.stderr}`,
  };
}

const suiteFile = (body: string) =>
  `import { suite } from 'uvu';\nimport * as assert from 'uvu/assert';\nimport { skipUnless, skipWhen } from './support/skip.ts';\nconst test = suite('fixture');\n${body}\ntest.run();\n`;

test('all passing: exit 0, the last line "N passed, 0 failed"', () => {
  const run = runSuites({
    'a.test.ts': suiteFile(`test('one', () => assert.ok(true));\ntest('two', () => assert.ok(true));`),
  });
  assert.equal([run.status, run.lastLine], [0, '2 passed, 0 failed'], run.output);
  assert.not.match(run.output, /skipped:/, 'no line of skips when nothing skipped');
});

test('a test that skips itself on this pass (tests/support/skip.ts) counts as skipped, not passed; the reasons come on the line before the last', async () => {
  const run = runSuites({
    'a.test.ts': suiteFile(
      [
        `test('runs', () => assert.ok(true));`,
        `test('needs a server', () => { if (skipUnless(false, 'needs PostgreSQL')) return; assert.ok(false, 'ran'); });`,
        `test('needs one too', () => { if (skipUnless(false, 'needs PostgreSQL')) return; assert.ok(false, 'ran'); });`,
        `test('runs here', () => { if (skipUnless(true, 'needs PostgreSQL')) return; assert.ok(true); });`,
      ].join('\n'),
    ),
    'b.test.ts': suiteFile(
      `test('embedded only', () => { if (skipWhen(true, 'embedded only')) return; assert.ok(false, 'ran'); });`,
    ),
  });
  assert.equal(
    [run.status, run.lineBefore, run.lastLine],
    [0, '3 skipped: needs PostgreSQL (×2); embedded only (×1)', '2 passed, 0 failed'],
    run.output,
  );
});

test('skips beside a failure: the failure still fails the run, and skips are neither passed nor failed', async () => {
  const run = runSuites({
    'a.test.ts': suiteFile(
      `test('fails', () => assert.ok(false));\ntest('skips', () => { if (skipUnless(false, 'needs PostgreSQL')) return; });`,
    ),
  });
  assert.equal(
    [run.status, run.lineBefore, run.lastLine],
    [1, '1 skipped: needs PostgreSQL (×1)', '0 passed, 1 failed'],
    run.output,
  );
});

test('a skipped test does not pass silently: it counts as failed and the run exits 1', () => {
  const run = runSuites({
    'a.test.ts': suiteFile(`test('runs', () => assert.ok(true));\ntest.skip('skipped', () => assert.ok(true));`),
    'b.test.ts': suiteFile(`test('runs too', () => assert.ok(true));`),
  });
  assert.equal([run.status, run.lastLine], [1, '2 passed, 1 failed'], run.output);
  assert.match(run.output, /skipped/);
});

test("test.only leaves the suite's other tests unrun: they count as failed and the run exits 1", () => {
  const run = runSuites({
    'a.test.ts': suiteFile(`test.only('only', () => assert.ok(true));\ntest('left out', () => assert.ok(true));`),
  });
  assert.is(run.status, 1, run.output);
  assert.match(run.lastLine ?? '', /^1 passed, [1-9]\d* failed$/);
});

test('a failing test: exit 1, counted', () => {
  const run = runSuites({
    'a.test.ts': suiteFile(`test('fails', () => assert.ok(false));\ntest('passes', () => assert.ok(true));`),
  });
  assert.equal([run.status, run.lastLine], [1, '1 passed, 1 failed'], run.output);
  assert.match(run.output, /FAIL\s+fixture\s+"fails"/, 'the failure is shown with its suite and name');
});

test('one count: the closing line is the only total (no "Total:" or "Passed:" of uvu\'s beside it, which counted skips as passed)', async () => {
  const run = runSuites({
    'a.test.ts': suiteFile(
      `test('skips', () => { if (skipUnless(false, 'not here')) return; });\ntest('passes', () => assert.ok(true));`,
    ),
  });
  assert.equal([run.status, run.lastLine], [0, '1 passed, 0 failed'], run.output);
  assert.not.match(run.output, /Total:|Passed:/);
});

test.run();
