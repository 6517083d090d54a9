import { type ChildProcess, spawn } from 'node:child_process';
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

/**
 * Starts `server/main.ts` the way `npm start` does, with exactly these settings; as one process on PostgreSQL too,
 * unless they set WEB_CONCURRENCY (tests/process/cluster.test.ts).
 */
export const startService = (env: Record<string, string>) => startScript('server/main.ts', env);

/**
 * Starts a TypeScript entry point (under tsx; `javascript`: a JavaScript one, as is) that logs `{"port":N,"role":…}`
 * once it listens; optionally pinned to one CPU (benchmarks). Only the last 256 KiB of its output are kept.
 */
export function startScript(
  script: string,
  env: Record<string, string>,
  options: { cpu?: number; nodeArgs?: string[]; javascript?: boolean; netns?: string } = {},
): ServiceProcess {
  const args = [...(options.nodeArgs ?? []), ...(options.javascript ? [] : ['--import', 'tsx']), script];
  // In a network namespace (a host of its own: tests/support/netns-host.ts), `ip netns exec` becomes the process.
  const [command, argv] =
    options.netns !== undefined
      ? ['ip', ['netns', 'exec', options.netns, process.execPath, ...args]]
      : options.cpu === undefined
        ? [process.execPath, args]
        : ['taskset', ['-c', String(options.cpu), process.execPath, ...args]];
  const child = spawn(command, argv, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', WEB_CONCURRENCY: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d).slice(-262_144);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /"port":(\d+),"role"/.exec(out);
      if (match) {
        clearInterval(timer);
        resolve(Number(match[1]));
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`exited with ${code} before listening:\n${out}`));
    });
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

/** A client of a service process: admin procedures and REST calls on its port. */
export function processClient(port: number, adminToken: string) {
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    async admin<T = Record<string, unknown>>(name: string, input: unknown): Promise<T> {
      const res = await fetch(`${base}/trpc/admin.${name}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
        body: JSON.stringify(input),
      });
      const body = (await res.json()) as { result?: { data: T } };
      if (res.status !== 200) throw new Error(`admin.${name} answered ${res.status}: ${JSON.stringify(body)}`);
      return body.result!.data;
    },
    rest: (path: string, init: RequestInit & { token?: string } = {}) =>
      fetch(`${base}${path}`, {
        ...init,
        headers: {
          ...(init.body !== undefined && { 'content-type': 'application/json' }),
          ...(init.token && { authorization: `Bearer ${init.token}` }),
          ...init.headers,
        },
      }),
  };
}

/**
 * The refresh token of the newest mail to `email` that the file mailer wrote into `dataDir` (quoted-printable undone).
 */
export async function mailedToken(dataDir: string, email: string, timeoutMs = 5000): Promise<string> {
  const { readdir, readFile } = await import('node:fs/promises');
  const dir = join(dataDir, 'mail');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const file of (await readdir(dir).catch(() => [] as string[])).sort().reverse()) {
      const text = (await readFile(join(dir, file), 'utf8')).replace(/=\r?\n/g, '');
      if (!text.toLowerCase().includes(`to: ${email.toLowerCase()}`)) continue;
      const token = text.split(/\r?\n/).find((line) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(line));
      if (token) return token;
    }
    if (Date.now() > deadline) throw new Error(`no mail to ${email} in ${dir}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An account with a contact, logged in through the mail like an integrator: the account's id and an access token. */
export async function integratorLoggedIn(
  client: ReturnType<typeof processClient>,
  dataDir: string,
  role: 'brand' | 'partner',
  email: string,
  expiresAfterSeconds = 3600,
): Promise<{ accountId: string; token: string }> {
  const { id: accountId } = await client.admin<{ id: string }>('accounts.create', { name: `Process ${role}`, role });
  await client.admin('contacts.create', { accountId, email });
  await client.rest('/v3/auth/login', { method: 'POST', body: JSON.stringify({ email }) });
  const refresh = await mailedToken(dataDir, email);
  const res = await client.rest('/v3/auth/access-token', {
    method: 'POST',
    body: JSON.stringify({ expires_after: expiresAfterSeconds }),
    token: refresh,
  });
  return { accountId, token: ((await res.json()) as { access_token: string }).access_token };
}

/**
 * A partner account with a partner-format configuration and a contact, logged in through the mail: its access token.
 */
export async function partnerLoggedIn(
  client: ReturnType<typeof processClient>,
  dataDir: string,
  email: string,
): Promise<string> {
  const { accountId, token } = await integratorLoggedIn(client, dataDir, 'partner', email);
  await client.admin('webhookConfigs.upsert', {
    accountId,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.3.0',
  });
  return token;
}
