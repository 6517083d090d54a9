import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const FILE = join(ROOT, 'docs', 'BENCHMARKS.md');
const HEADER =
  '# Benchmarks\n\nMeasured on the project machine (2 cores). Each section names the command that produced it; rerunning the command replaces the section.\n';

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
export const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

/**
 * Which code a section measured: the commit, and the last one that changed the service (server/, domain/, adapters/),
 * which a benchmark's own commits leave alone; BENCH_LABEL says what that code is (e.g. before or after a change).
 */
export function codeLine(label = process.env.BENCH_LABEL) {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  const dirty = git('status', '--porcelain', '--', 'server', 'domain', 'adapters') !== '';
  const benchDirty = git('status', '--porcelain', '--', 'bench') !== '';
  return (
    `Code: commit ${git('rev-parse', '--short', 'HEAD')}, the service's code as of ${git('log', '-1', '--format=%h (%s)', '--', 'server', 'domain', 'adapters')}` +
    `${dirty ? ', **with uncommitted changes**' : ''}${benchDirty ? ', the bench code with uncommitted changes' : ''}.` +
    `${label ? ` Measured on ${label}.` : ''}`
  );
}

/**
 * CPU seconds a process has used so far, all its threads (utime + stime from /proc, in ticks of 1/100 s); NaN once it
 * is gone.
 */
export function cpuSeconds(pid: number) {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return NaN;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The machine's 1-minute load average (other users of the machine included; 2 fills both cores here). */
export const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

/**
 * CPU seconds PostgreSQL has used so far on this machine: every live postgres process (backends, writers, autovacuum)
 * and, through the postmaster's children's times, the backends that have exited. A benchmark's share is the difference
 * over its run (other databases' work included; none runs during one here).
 */
export function postgresCpuSeconds() {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const parent = fields[1]!;
    let parentName = '';
    try {
      parentName = readFileSync(`/proc/${parent}/comm`, 'utf8').trim();
    } catch {
      /* gone */
    }
    total += Number(fields[11]) + Number(fields[12]);
    if (parentName !== 'postgres') total += Number(fields[13]) + Number(fields[14]); // the postmaster: its reaped children
  }
  return total / 100;
}
