// Runs every *.test.ts under tests/ in one process (uvu), closes what the suites shared, and ends with
// the line `N passed, N failed`. Arguments narrow the run to files whose path contains one of them.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { closeShared } from './support/shared.ts';

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
const passed = count('Passed') ?? 0;
// A skipped test (test.skip, or the others of a suite with test.only) never ran: it must not pass silently, so it
// counts as failed. An unreadable summary counts as a failure too.
const skipped = count('Skipped');
if (skipped === null) console.log('The summary of the run could not be read (no "Skipped:" line): the run fails.');
else if (skipped > 0) console.log(`${skipped} test(s) skipped (test.skip or test.only): counted as failed.`);
const failed = total - passed + (skipped ?? 0);
if (files.length === 0 || total === 0 || skipped === null) process.exitCode = 1;
if (failed > 0) process.exitCode = 1;
console.log(`${passed} passed, ${failed} failed`);
// Leftover handles (pools, timers) must not keep a finished run alive.
setTimeout(() => process.exit(), 100).unref();
process.exit();
