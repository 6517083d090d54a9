// Runs every *.test.ts under tests/ in one process (uvu), closes what the suites shared, and ends with
// the line `N passed, N failed`, after a line `N skipped: <reason> (×k); …` when tests skipped themselves
// (tests/support/skip.ts). Arguments narrow the run to files whose path contains one of them.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { closeShared } from './support/shared.ts';
import { recordedSkips } from './support/skip.ts';

const root = import.meta.dirname;
const filters = process.argv.slice(2);
const files = (readdirSync(root, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => join(root, f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();

// uvu's suites queue themselves (UVU_QUEUE: per file, its name and one run per suite) instead of running at once; the
// runs are made here, as uvu's exec makes them, so that their counts come back as values: one count, one closing line.
(globalThis as { UVU_DEFER?: number }).UVU_DEFER = 1;
await import('uvu');
type SuiteRun = () => Promise<[errors: string | true, passed: number, skipped: number, total: number]>;
const queue = (globalThis as unknown as { UVU_QUEUE: [string, ...SuiteRun[]][] }).UVU_QUEUE;
for (const [index, file] of files.entries()) {
  (globalThis as { UVU_INDEX?: number }).UVU_INDEX = index;
  queue.push([relative(root, file)]);
  await import(pathToFileURL(file).href);
}

const started = performance.now();
let [total, ran, unrun] = [0, 0, 0];
for (const [name, ...runs] of queue) {
  process.stdout.write(`\n${name}\n`);
  for (const run of runs) {
    const [errors, passed, skipped, tests] = await run();
    [total, ran, unrun] = [total + tests, ran + passed, unrun + skipped];
    if (errors !== true) process.stdout.write(`\n${errors}\n`);
    // uvu returns from its `finally`, which drops a hook's error: all that is left of it is tests that did not run.
    else if (passed + skipped < tests)
      process.stdout.write(`\n   FAIL  a hook of ${name} threw (uvu loses its error)\n`);
  }
}
await closeShared();

// A test skipped by uvu (test.skip, or the others of a suite with test.only) never ran: it must not pass silently,
// so it counts as failed.
if (unrun > 0) console.log(`${unrun} test(s) skipped (test.skip or test.only): counted as failed.`);
const failed = total - ran + unrun;
// A test that skipped itself on this pass (tests/support/skip.ts) returned at once, and uvu counted it as passed:
// it counts as skipped instead, which is not failing. More skips than passed tests means one was recorded outside
// a test: the count cannot be trusted, and the run fails.
const skips = recordedSkips();
const passed = ran - skips.length;
if (passed < 0)
  console.log(
    `${skips.length} skips recorded but only ${ran} tests passed (a skip outside a test body?): the run fails.`,
  );
if (files.length === 0 || total === 0 || passed < 0 || failed > 0) process.exitCode = 1;
console.log(`\n${files.length} files in ${((performance.now() - started) / 1000).toFixed(1)} s`);
if (skips.length > 0) {
  const reasons = new Map<string, number>();
  for (const reason of skips) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  console.log(`${skips.length} skipped: ${[...reasons].map(([reason, k]) => `${reason} (×${k})`).join('; ')}`);
}
console.log(`${Math.max(passed, 0)} passed, ${failed} failed`);
// Leftover handles (pools, timers) must not keep a finished run alive.
setTimeout(() => process.exit(), 100).unref();
process.exit();
