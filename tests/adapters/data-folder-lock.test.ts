import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DatabaseLockedError, lockDataFolder } from '../../adapters/persistence/database/data-folder-lock.ts';

// The embedded database's lock (adapters/persistence/database/data-folder-lock.ts), held by processes of their own.
const test = suite('the embedded data folder lock');
const roots: string[] = [];
const children: ChildProcess[] = [];
test.after(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function dataFolder() {
  const root = mkdtempSync(join(tmpdir(), 'pbi-lock-'));
  roots.push(root);
  mkdirSync(join(root, 'pglite'));
  return join(root, 'pglite');
}

interface Taker {
  child: ChildProcess;
  outcome(): Promise<string>;
  go(): void;
}

/** tests/support/lock-taker.ts on `dir`, once it is ready to try (holding the lock `holdMs`, or until killed). */
async function taker(dir: string, { holdMs, hostname }: { holdMs?: number; hostname?: string } = {}): Promise<Taker> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(import.meta.dirname, '..', 'support', 'lock-taker.ts'),
      dir,
      ...(holdMs === undefined ? [] : [String(holdMs)]),
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...(hostname && { LOCK_TAKER_HOSTNAME: hostname }),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d;
  });
  child.stderr!.on('data', (d: Buffer) => {
    out += d;
  });
  /** The first of these lines it says, or what it said before it exited. */
  const firstOf = async (lines: string[]) => {
    for (;;) {
      const line = out.split('\n').find((l) => lines.includes(l) || l.startsWith('failed'));
      if (line) return line;
      if (child.exitCode !== null || child.signalCode !== null) return `exited: ${out}`;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  assert.is(await firstOf(['ready']), 'ready');
  return { child, outcome: () => firstOf(['locked', 'refused']), go: () => child.stdin!.end('go\n') };
}

/** The lock as a process leaves it when it is killed while holding it. */
async function lockOfKilledProcess(dir: string, hostname?: string) {
  const owner = await taker(dir, { hostname });
  owner.go();
  assert.is(await owner.outcome(), 'locked');
  owner.child.kill('SIGKILL');
  await new Promise((resolve) => owner.child.once('exit', resolve));
}

const ageLock = (dir: string, ms: number) => {
  const at = new Date(Date.now() - ms);
  utimesSync(`${dir}.lock`, at, at);
};

test('a lock whose owner was killed is taken over at once; released, it leaves nothing behind', async () => {
  const dir = dataFolder();
  await lockOfKilledProcess(dir);
  const release = await lockDataFolder(dir);
  await release();
  assert.not.ok(existsSync(`${dir}.lock`), 'the lock is still there after its release');
});

test('the lock of a live process is refused at once', async () => {
  const dir = dataFolder();
  const owner = await taker(dir);
  owner.go();
  assert.is(await owner.outcome(), 'locked');
  try {
    await lockDataFolder(dir).then(
      () => assert.unreachable('took the lock of a live process'),
      (error: unknown) => assert.instance(error, DatabaseLockedError),
    );
  } finally {
    owner.child.kill('SIGKILL');
  }
});

test("processes racing to take over a dead owner's lock: exactly one gets it, the others are refused", async () => {
  // The last round's lock is past proper-lockfile's staleness too (its own takeover path races ours).
  for (const ageMs of [0, 0, 0, 30_000]) {
    const dir = dataFolder();
    await lockOfKilledProcess(dir);
    if (ageMs) ageLock(dir, ageMs);
    const racers = await Promise.all(Array.from({ length: 4 }, () => taker(dir, { holdMs: 1500 })));
    for (const racer of racers) racer.go();
    const outcomes = await Promise.all(racers.map((r) => r.outcome()));
    assert.equal(
      outcomes.filter((o) => o === 'locked').length,
      1,
      `round with a lock ${ageMs} ms old: ${outcomes.join(', ')}`,
    );
    assert.equal(
      outcomes.filter((o) => o === 'refused').length,
      3,
      `round with a lock ${ageMs} ms old: ${outcomes.join(', ')}`,
    );
    await Promise.all(
      racers.map(
        (r) => new Promise((resolve) => (r.child.exitCode === null ? r.child.once('exit', resolve) : resolve(null))),
      ),
    );
  }
});

test('a lock 10 s stale whose recorded pid is alive on this host (reused since) is taken over, not held forever', async () => {
  const dir = dataFolder();
  await lockOfKilledProcess(dir);
  // The dead owner's pid given to a live process since (after a reboot, say): here, the process that runs this test's
  // runner.
  writeFileSync(
    join(`${dir}.lock`, 'holder', 'owner.json'),
    JSON.stringify({ pid: process.ppid, hostname: hostname() }),
  );
  ageLock(dir, 11_000);
  const release = await lockDataFolder(dir);
  await release();
});

test('an owner on another host: refused while its lock is fresh, taken over once it is 10 s stale', async () => {
  const dir = dataFolder();
  await lockOfKilledProcess(dir, 'another-host.example');
  await lockDataFolder(dir).then(
    () => assert.unreachable('took a fresh lock of another host'),
    (error: unknown) => assert.instance(error, DatabaseLockedError),
  );
  ageLock(dir, 11_000);
  const release = await lockDataFolder(dir);
  await release();
});

test("a fresh lock naming this process's own pid, left by an earlier life of it (a container restarted), is taken over at once", async () => {
  const dir = dataFolder();
  // What a process killed with its container leaves, seen by the next start: pids restart from 1 in a container, so
  // the record names the pid this process has now. The lock is fresh (a restart is quicker than its 10 s staleness):
  // only the pid can tell that its owner is gone.
  mkdirSync(join(`${dir}.lock`, 'holder'), { recursive: true });
  writeFileSync(
    join(`${dir}.lock`, 'holder', 'owner.json'),
    JSON.stringify({ pid: process.pid, hostname: hostname() }),
  );
  const taken = await lockDataFolder(dir).catch((error: unknown) => error);
  assert.type(taken, 'function', `refused its own earlier life's lock: ${String(taken)}`);
  const release = taken as () => Promise<void>;
  try {
    // Held now, the same record is this life's: a second open in this process is refused.
    const again = await lockDataFolder(dir).then(
      () => null,
      (error: unknown) => error,
    );
    assert.instance(again, DatabaseLockedError, 'took a lock it holds itself');
  } finally {
    await release();
  }
  assert.not.ok(existsSync(`${dir}.lock`), 'the lock is still there after its release');
});

test.run();
