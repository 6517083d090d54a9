// What the benchmarks that judge CPU start: the service as `npm start` runs it once built (dist/), and the peers set
// beside it compiled by tsc too (bench/tsconfig.peers.json), so that neither side pays tsx's helpers on each request.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type ServiceProcess, startScript } from '../tests/support/process.ts';

const root = join(import.meta.dirname, '..');
const PEERS = join(root, 'node_modules', '.cache', 'pbi-bench-peers');
let built = false;

function run(args: string[]) {
  try {
    execFileSync(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`node ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/**
 * dist/ built from the sources as they are (npm run build), and the peers compiled; once per benchmark. A start that
 * finds the build stale all the same (the sources changed meanwhile) fails: see startBuiltService.
 */
function build() {
  if (built) return;
  run([join(root, 'scripts', 'build.mjs')]);
  const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
  run([tsc, '-p', join(root, 'bench', 'tsconfig.peers.json')]);
  built = true;
}

/** The service as built, through scripts/start.mjs; its start fails if that ran the sources under tsx instead. */
export function startBuiltService(
  env: Record<string, string>,
  options: { cpu?: number; nodeArgs?: string[] } = {},
): ServiceProcess {
  build();
  const proc = startScript('scripts/start.mjs', env, { ...options, javascript: true });
  const listening = proc.listening.then((port) => {
    if (proc.output().includes('Running the TypeScript sources'))
      throw new Error(`the service ran under tsx, not built:\n${proc.output().slice(0, 500)}`);
    return port;
  });
  listening.catch(() => {});
  return { ...proc, listening };
}

/** A peer of bench/ (floor-app.ts, bare-commands.ts, bare-sender.ts, bare-feed.ts), compiled. */
export function startBuiltPeer(
  script: 'bench/floor-app.ts' | 'bench/bare-commands.ts' | 'bench/bare-sender.ts' | 'bench/bare-feed.ts',
  env: Record<string, string>,
  options: { cpu?: number } = {},
): ServiceProcess {
  build();
  return startScript(join(PEERS, script.replace(/\.ts$/, '.js')), env, { ...options, javascript: true });
}
