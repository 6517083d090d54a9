import { execFile, execFileSync } from 'node:child_process';
import { accessSync, constants, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { argvAsServerUser, freePort, serverUserFolder, startTempPostgres, type TempPostgres } from './temp-postgres.ts';

const run = promisify(execFile);
const as = (command: string, args: string[]) => run(...argvAsServerUser(command, args), { timeout: 60_000 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface TempReplicaPair {
  primary: TempPostgres;
  replica: {
    port: number;
    /** A postgres:// URL of `database` on the replica (user postgres, trust authentication). */
    url(database: string): string;
    start(): Promise<void>;
    /** `pg_ctl stop -m fast`. */
    stop(): Promise<void>;
    /**
     * SIGSTOP / SIGCONT of the replica's postmaster and all its children: a replica that hangs (the kernel completes
     * TCP connections, but nothing answers).
     */
    freeze(): Promise<void>;
    thaw(): Promise<void>;
    /** The replica's own log (for failure messages). */
    log(): Promise<string>;
  };
  /** select pg_wal_replay_pause() / pg_wal_replay_resume() on the replica. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Resolves once the replica has replayed everything the primary had written when called (15 s at most). */
  caughtUp(): Promise<void>;
  /** Stops both servers if they run (a frozen replica is thawed first) and removes their folders; never fails. */
  destroy(): Promise<void>;
  /** The same, synchronously: for a process 'exit' handler. */
  destroySync(): void;
}

const TOOLS = ['initdb', 'pg_ctl', 'pg_basebackup'];

/** Why a pair cannot be made here (PostgreSQL's tools not in PATH), or null when it can. */
export const replicaToolsMissing = (): string | null => {
  const folders = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  const runnable = (file: string) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  const missing = TOOLS.filter((tool) => !folders.some((folder) => runnable(join(folder, tool))));
  return missing.length === 0 ? null : `needs PostgreSQL's ${missing.join(', ')} in PATH`;
};

/** One statement on a connection of its own. */
export async function sql<T = Record<string, unknown>>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client(url);
  client.on('error', () => {});
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * A primary (tests/support/temp-postgres.ts) and a hot standby streaming from it, copied with pg_basebackup, each on
 * a free port of 127.0.0.1. `settings` are `-c name=value` options of both servers: a standby refuses to run with a
 * lower max_connections (and a few others) than its primary's, so they must match.
 */
export async function startReplicaPair(settings: Record<string, string> = {}): Promise<TempReplicaPair> {
  // initdb's defaults already stream: wal_level=replica, max_wal_senders=10, and pg_hba trusts replication
  // connections from 127.0.0.1.
  const primary = await startTempPostgres(settings);
  let dir: string;
  try {
    dir = await serverUserFolder('pbi-pg-replica-');
  } catch (error) {
    await primary.destroy();
    throw error;
  }
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  let port = 0;
  const options = () =>
    [
      `-p ${port}`,
      `-k ${dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c hot_standby_feedback=on',
      '-c fsync=off',
      ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`),
    ].join(' ');

  /** The postmaster first, so that it forks no child the list would miss, then each child. */
  const processes = (): number[] => {
    const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    let children = '';
    try {
      children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' });
    } catch {
      /* ps exits 1 when there is no child */
    }
    return [postmaster, ...children.split(/\s+/).filter(Boolean).map(Number)];
  };
  const signal = (name: 'SIGSTOP' | 'SIGCONT') => {
    for (const pid of processes()) {
      try {
        process.kill(pid, name);
      } catch {
        /* it exited meanwhile */
      }
    }
  };
  // A frozen server ignores pg_ctl's stop until it runs again; a stopped one has no postmaster.pid.
  const thawQuietly = () => {
    try {
      signal('SIGCONT');
    } catch {
      /* not running */
    }
  };
  const stopCommand = ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop'];
  const remove = () => {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      /* destroying never fails */
    }
  };

  const replica: TempReplicaPair['replica'] = {
    get port() {
      return port;
    },
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async start() {
      await as('pg_ctl', ['-D', data, '-o', options(), '-l', logFile, '-w', '-t', '30', 'start']);
    },
    async stop() {
      await as('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']);
    },
    async freeze() {
      signal('SIGSTOP');
    },
    async thaw() {
      signal('SIGCONT');
    },
    log: () => readFile(logFile, 'utf8').catch(() => ''),
  };

  const pair: TempReplicaPair = {
    primary,
    replica,
    async pauseReplay() {
      await sql(replica.url('postgres'), 'select pg_wal_replay_pause()');
    },
    async resumeReplay() {
      await sql(replica.url('postgres'), 'select pg_wal_replay_resume()');
    },
    async caughtUp() {
      const [written] = await sql<{ lsn: string }>(primary.url('postgres'), 'select pg_current_wal_lsn()::text as lsn');
      const client = new pg.Client(replica.url('postgres'));
      client.on('error', () => {});
      await client.connect();
      try {
        const deadline = Date.now() + 15_000;
        for (;;) {
          const { rows } = await client.query<{ done: boolean | null; at: string | null }>(
            'select pg_last_wal_replay_lsn() >= $1::pg_lsn as done, pg_last_wal_replay_lsn()::text as at',
            [written!.lsn],
          );
          if (rows[0]!.done) return;
          if (Date.now() > deadline)
            throw new Error(`the replica replayed up to ${rows[0]!.at} in 15 s, not up to ${written!.lsn}`);
          await sleep(20);
        }
      } finally {
        await client.end();
      }
    },
    async destroy() {
      thawQuietly();
      await as('pg_ctl', stopCommand).catch(() => {});
      remove();
      await primary.destroy();
    },
    destroySync() {
      thawQuietly();
      try {
        execFileSync(...argvAsServerUser('pg_ctl', stopCommand), { stdio: 'ignore', timeout: 30_000 });
      } catch {
        /* not running */
      }
      remove();
      primary.destroySync();
    },
  };

  try {
    // A fast checkpoint, or the copy waits for a spread one; -R makes it a standby that streams from the primary.
    await as('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', data],
      ...['-R', '-X', 'stream', '--checkpoint=fast', '--no-sync'],
    ]);
    port = await freePort();
    await replica.start();
  } catch (error) {
    await pair.destroy();
    throw error;
  }
  return pair;
}
