import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { DatabaseSetupError } from './database.ts';

export class DatabaseLockedError extends DatabaseSetupError {
  constructor(readonly dir: string) {
    super(
      `The embedded database in ${dir} is in use by another process. The embedded database serves one process only: ` +
        'stop the other process, choose another PGLITE_DIR, or set DATABASE_URL to share a PostgreSQL server.',
    );
  }
}

/** proper-lockfile's: a lock whose folder's time was not renewed for this long is abandoned (it renews every 2 s). */
const STALE_MS = 10_000;
/** The folder inside the lock that names its holder: one file, `owner.json` or a claim. */
const HOLDER = 'holder';
/** `{ pid, hostname }` of the process that took the lock. */
const OWNER = 'owner.json';
/** The owner's record, renamed by the process that takes the lock over from a dead owner. */
const CLAIM = /^taken-by-(\d+)@(.+)$/;

interface Holder {
  pid: number;
  hostname: string;
}

/**
 * Lock folders this process holds: its own pid in a record means an earlier life of it only when it is not one of
 * these.
 */
const held = new Set<string>();

/**
 * Two processes on one data folder lose writes silently: the second one must refuse to start. The lock is the
 * folder `<dir>.lock` beside `dir` (which must exist), taken with proper-lockfile, which renews its time every 2 s,
 * and naming its owner's pid and host. A lock whose owner is dead (killed: nothing released it) is taken over at
 * once, a live owner's refused at once. Whether an owner on another host lives only its renewals tell, so its lock
 * is taken over once stale (10 s without renewal), as proper-lockfile would. Answers the release.
 */
export async function lockDataFolder(
  dir: string,
  onCompromised?: (error: Error) => void,
): Promise<() => Promise<void>> {
  const { default: lockfile } = await import('proper-lockfile');
  const lockPath = `${dir}.lock`;
  const me: Holder = { pid: process.pid, hostname: hostname() };
  // A lock that vanishes between a refusal and a look at it is tried again; a few rounds are plenty.
  for (let round = 0; round < 5; round++) {
    let release: (() => Promise<void>) | undefined;
    try {
      release = await lockfile.lock(dir, {
        lockfilePath: lockPath,
        stale: STALE_MS,
        update: 2_000,
        onCompromised:
          onCompromised ??
          ((error) => {
            throw error;
          }),
      });
      await nameOwner(lockPath, me);
    } catch (error) {
      await release?.().catch(() => {});
      // ENOTEMPTY: proper-lockfile found the lock stale but cannot remove a folder that names its holder: ours to
      // judge.
      const code = (error as NodeJS.ErrnoException).code;
      // The lock just taken vanished before its owner was named in it: a racer judged it abandoned and moved it away
      // (proper-lockfile's own takeover of a stale lock races ours). Whoever holds it now is judged in the next round.
      if (code === 'ENOENT' && release) continue;
      if (code !== 'ELOCKED' && code !== 'ENOTEMPTY') throw error;
      if (await removeIfAbandoned(lockPath, me)) continue;
      throw new DatabaseLockedError(dir);
    }
    held.add(lockPath);
    const releaseLock = release;
    return async () => {
      held.delete(lockPath);
      // proper-lockfile stops renewing, then fails to remove the folder (not empty): the rest is ours.
      await releaseLock().catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOTEMPTY') throw error;
      });
      await rm(lockPath, { recursive: true, force: true });
    };
  }
  throw new DatabaseLockedError(dir);
}

/**
 * Puts the holder folder with the owner's record into the lock in one step (a reader never sees one without the
 * other), and gives the lock its time back: proper-lockfile takes a lock whose time it did not set as lost.
 */
async function nameOwner(lockPath: string, me: Holder) {
  const { atime, mtime } = await stat(lockPath);
  const draft = `${lockPath}.${randomUUID()}`;
  await mkdir(draft);
  try {
    await writeFile(join(draft, OWNER), JSON.stringify(me));
    await rename(draft, join(lockPath, HOLDER));
  } finally {
    await rm(draft, { recursive: true, force: true });
  }
  await utimes(lockPath, atime, mtime);
}

/**
 * Removes the lock when its holder (its owner, or a process that died taking it over) is dead; answers whether the
 * lock is gone. Racing processes each rename the record to a claim of their own: a file is renamed once, so one of
 * them gets it and the others find a live claim. The claimer judges the record it got again (a live process may
 * have taken the lock meanwhile: then its record goes back), and moves the lock away in one step, so that nothing
 * created since can go with it. The renames happen inside the holder folder: the lock's own time stays its owner's.
 */
async function removeIfAbandoned(lockPath: string, me: Holder): Promise<boolean> {
  const holderDir = join(lockPath, HOLDER);
  let names: string[];
  try {
    names = await readdir(holderDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    // No holder named: the lock is gone, or was taken a moment ago (or by an older version: proper-lockfile's
    // staleness removes an empty one).
    return !(await exists(lockPath));
  }
  const record = names.includes(OWNER) ? OWNER : names.find((name) => CLAIM.test(name));
  if (!record) return false;
  const holder = await readHolder(holderDir, record);
  if (await isAlive(holder, lockPath, record === OWNER ? undefined : join(holderDir, record))) return false;

  const claim = `taken-by-${me.pid}@${me.hostname}`;
  try {
    await rename(join(holderDir, record), join(holderDir, claim));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false; // another process claimed it first
    throw error;
  }
  // A claim's name is its claimer: the one renamed is the one judged. An owner's record may be a newer owner's.
  if (record === OWNER) {
    const taken = await readOwner(join(holderDir, claim));
    if (await isAlive(taken, lockPath)) {
      await rename(join(holderDir, claim), join(holderDir, OWNER));
      return false;
    }
  }
  const grave = `${lockPath}.abandoned-${randomUUID()}`;
  await rename(lockPath, grave);
  await rm(grave, { recursive: true, force: true });
  return true;
}

/** Who a record names: the claimer in a claim's name, else the owner's content (null when unreadable). */
async function readHolder(holderDir: string, name: string): Promise<Holder | null> {
  const claim = CLAIM.exec(name);
  return claim ? { pid: Number(claim[1]), hostname: claim[2]! } : readOwner(join(holderDir, name));
}

async function readOwner(path: string): Promise<Holder | null> {
  try {
    const { pid, hostname: host } = JSON.parse(await readFile(path, 'utf8')) as Partial<Holder>;
    return Number.isInteger(pid) && typeof host === 'string' ? { pid: pid!, hostname: host } : null;
  } catch {
    return null;
  }
}

/**
 * A holder lives while its lock is renewed (an owner renews it every 2 s; a claimer, which renews nothing, counts from
 * its claim's time), for as long as the lock's staleness. On this host a dead pid ends that at once; a live pid does
 * not prolong it: the pid of an owner gone long ago may belong to another process by now (after a reboot, say).
 */
async function isAlive(holder: Holder | null, lockPath: string, claimPath?: string): Promise<boolean> {
  const info = await stat(claimPath ?? lockPath).catch(() => null);
  const fresh = info !== null && (claimPath ? info.ctimeMs : info.mtimeMs) >= Date.now() - STALE_MS;
  if (!holder || holder.hostname !== hostname() || !fresh) return fresh;
  // Our own pid: an earlier life of this process (a container restarted gives the same pid again), unless we hold it.
  if (holder.pid === process.pid) return held.has(lockPath);
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, under another user
  }
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );
