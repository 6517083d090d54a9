import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const FILE = join(ROOT, 'docs', 'BENCHMARKS.md');
/** Where a section's part written by hand begins: a rerun of its bench keeps it, after the new figures. */
const BY_HAND = '<!-- by hand: kept when the bench runs again -->';
const HEADER =
  '# Benchmarks\n\nMeasured on the project machine (2 cores). Each section names the command that produced it; ' +
  `rerunning the command replaces the section, up to its part written by hand (after the line \`${BY_HAND}\`), ` +
  'which it keeps.\n';

/** Replaces (or appends) the section `## title` of docs/BENCHMARKS.md, keeping its part written by hand. */
export async function writeSection(title: string, body: string) {
  const current = await readFile(FILE, 'utf8').catch(() => HEADER);
  await writeFile(FILE, withSection(current, title, body));
}

/** `document` with its section `## title` replaced by `body` (or appended), the old section's part by hand kept. */
export function withSection(document: string, title: string, body: string): string {
  const section = `## ${title}\n\n${body.trim()}\n`;
  const start = document.indexOf(`## ${title}\n`);
  if (start === -1) return `${document.trimEnd()}\n\n${section}`;
  const end = document.indexOf('\n## ', start + 1);
  const old = document.slice(start, end === -1 ? undefined : end);
  const byHand = old.indexOf(BY_HAND);
  const kept = byHand === -1 ? '' : `\n${old.slice(byHand).trim()}\n`;
  return document.slice(0, start) + section + kept + (end === -1 ? '' : document.slice(end));
}

/** How a report says whether a target was reached. */
export const met = (ok: boolean) => (ok ? 'met' : 'not met');

/** A number of seconds from the environment variable `name` (0 or more), or `fallback` when it is not set. */
export function secondsSetting(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number of seconds, 0 or more`);
  return value;
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
    `${dirty ? ', **with uncommitted changes**' : ''}` +
    `${benchDirty ? ', the bench code with uncommitted changes' : ''}.` +
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
