import { DatabaseSetupError } from './database.ts';

export class DatabaseLockedError extends DatabaseSetupError {
  constructor(readonly dir: string) {
    super(`The embedded database in ${dir} is in use by another process. The embedded database serves one process only: `
      + 'stop the other process, choose another PGLITE_DIR, or set DATABASE_URL to share a PostgreSQL server.');
  }
}

/**
 * Two processes on one data folder lose writes silently: the second one must refuse to start. The lock is the
 * folder `<dir>.lock` beside `dir` (which must exist); answers its release.
 */
export async function lockDataFolder(dir: string, onCompromised?: (error: Error) => void): Promise<() => Promise<void>> {
  const { default: lockfile } = await import('proper-lockfile');
  return lockfile
    .lock(dir, {
      lockfilePath: `${dir}.lock`,
      stale: 10_000,
      update: 2_000,
      onCompromised: onCompromised ?? ((error) => { throw error; }),
    })
    .catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ELOCKED') throw new DatabaseLockedError(dir);
      throw error;
    });
}
