import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ServiceProcess, startService } from '../support/process.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// The primary's restart of a process that died (server/processes/primary.ts, with the delay restarts.ts answers):
// tests/server/processes.test.ts checks the delays the policy answers; this checks that the primary waits them.
const test = suite("the whole machine: a dead process's replacement waits its delay");
const server = process.env.DATABASE_URL;
const database = `pbi_restart_${process.pid}_${Date.now()}`;
const urlOf = (name: string) => {
  const url = new URL(server!);
  url.pathname = `/${name}`;
  return url.toString();
};
const dataDir = mkdtempSync(join(tmpdir(), 'pbi-restart-'));
let service: ServiceProcess | undefined;

async function sql(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * Times on the kernel's boot clock, in ms, from 10 ms ticks: now (/proc/uptime), and when a process was forked
 * (/proc/<pid>/stat's 22nd field). A fork's time is the kernel's record of it, however late this test looks.
 */
const uptimeMs = () => Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000;
const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
const forkedAtMs = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) / ticksPerSecond) * 1000;
};
/** The primary's processes running the service (tsx's esbuild helper is a child of its own). */
function members(): number[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(service!.child.pid)], { encoding: 'utf8' });
  } catch {
    /* none: ps exits 1 */
  }
  return out
    .split('\n')
    .filter((l) => l.includes('server/main'))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}
const lines = () =>
  service!
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function eventually<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const value = probe();
    if (value !== undefined) return value;
    const alive = service!.child.exitCode === null;
    assert.ok(Date.now() < deadline && alive, `${what} within ${timeoutMs} ms:\n${service!.output().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test.before(async () => {
  if (onPostgres) await sql(urlOf('postgres'), `create database ${database}`);
});

test.after(async () => {
  // The primary's processes first, while ps still finds them by their parent; then the primary.
  if (service?.child.exitCode === null)
    for (const pid of members())
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
  await service?.stop('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
  if (onPostgres) await sql(urlOf('postgres'), `drop database if exists ${database} with (force)`);
});

test('a killed worker process is forked again no sooner than the restartInMs its line says (1 s for a first death)', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return;
  service = startService({
    DATABASE_URL: urlOf(database),
    WEB_CONCURRENCY: '2',
    DATABASE_POOL_SIZE: '3',
    DATA_DIR: dataDir,
    JWT_SECRET: 'restart-test-secret-0123456789-0123456789',
  });
  // Once the start is whole: a process that dies before (a start that cannot work) stops it instead.
  await eventually('the ready line', () =>
    lines().find((l) => String(l.msg).startsWith('ready: ') && l.role === 'all'),
  );
  const worker = await eventually('the worker started', () =>
    lines().find((l) => l.msg === 'worker started' && typeof l.pid === 'number'),
  );
  const before = members();
  assert.is(before.length, 3, `the primary's processes: ${before.join(', ')}`);
  const killedAt = uptimeMs();
  process.kill(worker.pid as number, 'SIGKILL');
  const died = await eventually('the death line', () =>
    lines().find((l) => l.msg === 'the worker process died; starting another'),
  );
  assert.is(died.restartInMs, 1000);
  const replacement = await eventually('the replacement forked', () => members().find((pid) => !before.includes(pid)));
  // A lower bound only: a busy machine makes the fork later, never sooner. Both times are truncated to 10 ms ticks.
  const waited = forkedAtMs(replacement) - killedAt;
  const delayMs = died.restartInMs as number;
  assert.ok(
    waited >= delayMs - 20,
    `the replacement was forked ${Math.round(waited)} ms after the death, not after ${delayMs} ms`,
  );
});

test.run();
