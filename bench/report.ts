import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const FILE = join(import.meta.dirname, '..', 'docs', 'BENCHMARKS.md');
const HEADER = '# Benchmarks\n\nMeasured on the project machine (2 cores). Each section names the command that produced it; rerunning the command replaces the section.\n';

/** Replaces (or appends) the section `## title` of docs/BENCHMARKS.md. */
export async function writeSection(title: string, body: string) {
  const current = await readFile(FILE, 'utf8').catch(() => HEADER);
  const section = `## ${title}\n\n${body.trim()}\n`;
  const start = current.indexOf(`## ${title}\n`);
  let next: string;
  if (start === -1) next = `${current.trimEnd()}\n\n${section}`;
  else {
    const end = current.indexOf('\n## ', start + 1);
    next = current.slice(0, start) + section + (end === -1 ? '' : current.slice(end));
  }
  await writeFile(FILE, next);
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
export const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
