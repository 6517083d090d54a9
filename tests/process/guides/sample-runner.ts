// The shell samples of docs/operators.md, and how the suite runs one here: after the helpers sample, on free ports, in
// folders of its own and, on PostgreSQL, in the suite's database; in a process group of its own.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import * as assert from 'uvu/assert';
import { operators, root } from './support.ts';

export const server = process.env.DATABASE_URL; // set on the PostgreSQL pass of the suite

interface Sample {
  id: string;
  only: 'postgres' | 'embedded' | null;
  code: string;
}

export const samples: Sample[] = [
  ...operators.matchAll(/<!-- operators: ([\w-]+)(?: (postgres|embedded))? -->\n```sh\n([\s\S]*?)```/g),
].map((m) => ({ id: m[1]!, only: (m[2] as Sample['only']) ?? null, code: m[3]! }));
export const helpers = samples.find((s) => s.id === 'helpers');

/** Ports the samples use; each becomes a free port of the test's own. */
const PORTS = ['3000', '3001', '3100'];
/** Folders the samples use; each becomes a folder of the same name in the sample's own temporary folder. */
const FOLDERS = ['/var/lib', '/var/log', '/backups'];

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * The sample as it runs here: the helpers first; the folders under /var/lib/, /var/log/ and /backups/ in `dir`; the
 * documented ports on free ones; on PostgreSQL, the documented server and database `partner_api` as this test's.
 */
export async function localize(code: string, dir: string, database: string | null): Promise<string> {
  let script = `${helpers!.code}\n${code}`;
  const literals = [...script.matchAll(/(?:localhost:|PORT=|PORT:-)(\d+)/g)].map((m) => m[1]!);
  assert.equal(
    literals.filter((p) => !PORTS.includes(p)),
    [],
    'ports the test does not replace',
  );
  for (const port of PORTS) script = script.replace(new RegExp(`\\b${port}\\b`, 'g'), String(await freePort()));
  FOLDERS.forEach((folder, i) => {
    script = script.replace(new RegExp(`(?<![\\w/.])${folder.replaceAll('/', '\\/')}(?![\\w-])`, 'g'), `\u0000${i}`);
  });
  assert.not.match(script, /\/var\/|\/backups/, 'folders the test does not replace');
  FOLDERS.forEach((folder, i) => {
    script = script.replaceAll(`\u0000${i}`, `${dir}/${folder.split('/').at(-1)}`);
  });
  if (database) {
    const base = new URL(server!);
    script = script
      .replaceAll(
        'postgres://postgres@127.0.0.1:5432/',
        `${base.protocol}//${base.username ? `${base.username}${base.password ? `:${base.password}` : ''}@` : ''}${base.host}/`,
      )
      .replaceAll('partner_api', database);
  }
  return script;
}

/** Runs the script in a process group of its own; whatever it leaves running is killed, and reported. */
export function runScript(
  script: string,
  env: Record<string, string>,
): Promise<{ status: number | null; output: string; leftovers: boolean }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], {
      cwd: root,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d;
    });
    const group = (signal: NodeJS.Signals | 0) => {
      try {
        process.kill(-child.pid!, signal);
        return true;
      } catch {
        return false;
      }
    };
    const timer = setTimeout(() => {
      output += '\n[the sample took longer than 2 minutes]';
      group('SIGKILL');
    }, 120_000);
    let exit: { status: number | null; leftovers: boolean } = { status: null, leftovers: false };
    child.on('exit', (status) => {
      clearTimeout(timer);
      exit = { status, leftovers: group(0) };
      if (exit.leftovers) group('SIGKILL');
    });
    child.on('close', () => resolve({ ...exit, output }));
  });
}
