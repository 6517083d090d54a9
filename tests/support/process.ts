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
export const startService = (env: Record<string, string>) => startScript('server/main.ts', env);

/**
 * Starts a TypeScript entry point that logs `{"port":N,"role":…}` once it listens; optionally pinned to one
 * CPU (benchmarks). Only the last 256 KiB of its output are kept.
 */
export function startScript(script: string, env: Record<string, string>, options: { cpu?: number } = {}): ServiceProcess {
  const args = ['--import', 'tsx', script];
  const [command, argv] = options.cpu === undefined ? [process.execPath, args] : ['taskset', ['-c', String(options.cpu), process.execPath, ...args]];
  const child = spawn(command, argv, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => { out = (out + d).slice(-262_144); };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
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
