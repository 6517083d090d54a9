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

(globalThis as { UVU_DEFER?: number }).UVU_DEFER = 1;
const uvu = await import('uvu');
const queue = (globalThis as unknown as { UVU_QUEUE: unknown[][] }).UVU_QUEUE;
for (const [index, file] of files.entries()) {
  (globalThis as { UVU_INDEX?: number }).UVU_INDEX = index;
  queue.push([relative(root, file)]);
  await import(pathToFileURL(file).href);
}

let output = '';
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  output += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
  return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stdout.write;
await uvu.exec();
process.stdout.write = write;
await closeShared();

const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
/** A number of uvu's closing summary (its last occurrence: a test's own output cannot stand in for it). */
const count = (label: string) => {
  const match = [...plain.matchAll(new RegExp(`^\\s*${label}:\\s+(\\d+)$`, 'gm'))].at(-1);
  return match ? Number(match[1]) : null;
};
const total = count('Total') ?? 0;
// A test skipped by uvu (test.skip, or the others of a suite with test.only) never ran: it must not pass silently,
// so it counts as failed. An unreadable summary counts as a failure too.
const unrun = count('Skipped');
if (unrun === null) console.log('The summary of the run could not be read (no "Skipped:" line): the run fails.');
else if (unrun > 0) console.log(`${unrun} test(s) skipped (test.skip or test.only): counted as failed.`);
const failed = total - (count('Passed') ?? 0) + (unrun ?? 0);
// A test that skipped itself on this pass (tests/support/skip.ts) returned at once, and uvu counted it as passed:
// it counts as skipped instead, which is not failing. More skips than passed tests means one was recorded outside
// a test: the count cannot be trusted, and the run fails.
const skips = recordedSkips();
const passed = (count('Passed') ?? 0) - skips.length;
if (passed < 0) console.log(`${skips.length} skips recorded but only ${passed + skips.length} tests passed (a skip outside a test body?): the run fails.`);
if (files.length === 0 || total === 0 || unrun === null || passed < 0 || failed > 0) process.exitCode = 1;
if (skips.length > 0) {
  const reasons = new Map<string, number>();
  for (const reason of skips) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  console.log(`${skips.length} skipped: ${[...reasons].map(([reason, k]) => `${reason} (×${k})`).join('; ')}`);
}
console.log(`${Math.max(passed, 0)} passed, ${failed} failed`);
// Leftover handles (pools, timers) must not keep a finished run alive.
setTimeout(() => process.exit(), 100).unref();
process.exit();
