import { execFile, execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A port nobody listens on right now (the kernel's pick for port 0, released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const asRoot = userInfo().uid === 0;

/** `command args` as the OS user that runs the servers: `postgres` when this process is root, else this process's. */
export const argvAsServerUser = (command: string, args: string[]): [string, string[]] =>
  asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];

/** A fresh folder (mode 0700) under the system's temporary folder, owned by the OS user that runs the servers. */
export async function serverUserFolder(prefix: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  return dir;
}

export interface TempPostgres {
  port: number;
  /** A postgres:// URL of `database` on this server (user postgres, trust authentication). */
  url(database: string): string;
  start(): Promise<void>;
  /** `pg_ctl stop -m fast`: sessions are ended at once, the server checkpoints and exits. */
  stop(): Promise<void>;
  /** Stops the server if it runs and removes its data folder; never fails. */
  destroy(): Promise<void>;
  /** The same, synchronously: for a process 'exit' handler, should a run end without its after hooks. */
  destroySync(): void;
  /** The server's own log (for failure messages). */
  log(): Promise<string>;
}

/**
 * A PostgreSQL server of its own for a test, on a fresh data folder under the system's temporary folder and a free
 * port on 127.0.0.1 (its socket in the data folder), so that the test may stop and start it. PostgreSQL refuses to run
 * as root: as root, the server runs as the OS user `postgres`, which then owns the folder. `settings` are
 * `-c name=value` options of the server.
 */
export async function startTempPostgres(settings: Record<string, string> = {}): Promise<TempPostgres> {
  const dir = await serverUserFolder('pbi-pg-');
  const as = (command: string, args: string[]) => run(...argvAsServerUser(command, args), { timeout: 60_000 });
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  let port = 0;
  try {
    await as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale', 'C']);
    port = await freePort();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`),
  ].join(' ');
  const server: TempPostgres = {
    port,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async start() {
      await as('pg_ctl', ['-D', data, '-o', options, '-l', logFile, '-w', '-t', '30', 'start']);
    },
    async stop() {
      await as('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']);
    },
    async destroy() {
      // Also after a start that failed half-way (it may have left a server); stopping a stopped one just fails.
      await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop']).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
    destroySync() {
      try {
        execFileSync(...argvAsServerUser('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop']), {
          stdio: 'ignore',
          timeout: 30_000,
        });
      } catch {
        /* not running */
      }
      rmSync(dir, { recursive: true, force: true });
    },
    async log() {
      const { readFile } = await import('node:fs/promises');
      return readFile(logFile, 'utf8').catch(() => '');
    },
  };
  try {
    await server.start();
  } catch (error) {
    await server.destroy();
    throw error;
  }
  return server;
}
