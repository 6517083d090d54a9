import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

export interface ServiceProcess {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the port once the service listens, or rejects with its output if it exits first. */
  listening: Promise<number>;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `server/main.ts` the way `npm start` does, with exactly these settings. */
export function startService(env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /"port":(\d+),"role"/.exec(out);
      if (match) { clearInterval(timer); resolve(Number(match[1])); }
    }, 50);
    void exited.then((code) => { clearInterval(timer); reject(new Error(`exited with ${code} before listening:\n${out}`)); });
  });
  listening.catch(() => {});
  return {
    child,
    output: () => out,
    listening,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
