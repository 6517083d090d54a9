// The worker's side of bench:tracing: CPU of the built worker per brand command it executes (one span, kind consumer),
// with its endpoint disabled, or with its two webhooks delivered (OrderStatusEvent and CommandResultEvent: a span each,
// kind client), traced against not. Commands come from an untraced API process; the webhooks go to a receiver in the
// bench's process.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { ServiceProcess } from '../tests/support/process.ts';
import { startBuiltService } from './built.ts';
import type { BenchPath } from './cpu-fixtures.ts';
import { send } from './cpu-fixtures.ts';

export interface WorkerBench {
  databaseUrl: string;
  env: (traced: boolean) => Record<string, string>;
  /** The untraced API process that accepts the commands. */
  apiPort: number;
  command: BenchPath;
  /** Webhooks the receiver has had so far. */
  received: () => number;
  /** Turns the brand's endpoint on or off (disabled). */
  webhooks: (on: boolean) => Promise<void>;
  started: ServiceProcess[];
}

const cpuMicros = (pid: number, clockTicks: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks;
};

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 300_000) {
  for (const deadline = Date.now() + timeoutMs; !(await check()); await new Promise((r) => setTimeout(r, 100)))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
}

/**
 * µs of the worker's CPU per command executed, with its two webhooks delivered (`webhooks`) or its endpoint disabled,
 * in a fresh worker process.
 */
export async function workerMicrosPerCommand(
  bench: WorkerBench,
  traced: boolean,
  commands: number,
  clockTicks: number,
  webhooks: boolean,
): Promise<number> {
  await bench.webhooks(webhooks);
  const db = new pg.Client({ connectionString: bench.databaseUrl });
  await db.connect();
  const worker = startBuiltService({ ...bench.env(traced), SERVICE_ROLE: 'worker' }, { cpu: 0 });
  bench.started.push(worker);
  try {
    await worker.listening;
    const pid = worker.child.pid!;
    // What earlier runs left to do first: every command run, every delivery due sent.
    const idle = async () => {
      const { rows } = await db.query<{ n: string }>(
        `select (select count(*) from commands where status in ('accepted', 'running'))
              + (select count(*) from deliveries where status = 'pending' and next_attempt_at <= now()) as n`,
      );
      return rows[0]!.n === '0';
    };
    await until(idle, 'the worker to finish what was queued before');
    const before = cpuMicros(pid, clockTicks);
    const receivedBefore = bench.received();
    const { unexpected } = await send(bench.apiPort, bench.command, commands, 16);
    if (unexpected > 0) throw new Error(`${unexpected} commands not accepted`);
    await until(
      async () => (webhooks ? bench.received() >= receivedBefore + 2 * commands : await idle()),
      webhooks ? 'every webhook of the commands' : 'every command to run',
    );
    if (!webhooks && bench.received() !== receivedBefore) throw new Error('the endpoint was not disabled');
    return (cpuMicros(pid, clockTicks) - before) / commands;
  } finally {
    await worker.stop();
    await db.end();
  }
}
