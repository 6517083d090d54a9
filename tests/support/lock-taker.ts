// A process of its own around the embedded data folder's lock, for the lock tests: it says `ready`, waits for a line
// on stdin, tries to take the lock of the folder in argv[2], says `locked` or `refused`, holds the lock for argv[3] ms
// (until killed when absent), then lets it go. LOCK_TAKER_HOSTNAME makes it look like a process of another host.

import { once } from 'node:events';
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';

if (process.env.LOCK_TAKER_HOSTNAME) {
  os.hostname = () => process.env.LOCK_TAKER_HOSTNAME!;
  syncBuiltinESMExports();
}
const { DatabaseLockedError, lockDataFolder } = await import('../../adapters/persistence/database/data-folder-lock.ts');
const [dir, holdMs] = [process.argv[2]!, process.argv[3] === undefined ? Infinity : Number(process.argv[3])];

console.log('ready');
const lines = createInterface({ input: process.stdin });
await once(lines, 'line');
lines.close();
try {
  const release = await lockDataFolder(dir);
  console.log('locked');
  await delay(Math.min(holdMs, 2 ** 31 - 1)); // a timer keeps the process alive while it holds the lock
  await release();
  console.log('released');
} catch (error) {
  console.log(error instanceof DatabaseLockedError ? 'refused' : `failed: ${String(error)}`);
}
