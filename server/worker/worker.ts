import type { BackgroundWork } from '../../domain/ports.ts';
import { failureLevel, type Logger } from '../logger.ts';
import type { WorkSignal } from './wake-up-signal.ts';

export interface WorkerTask {
  name: string;
  /**
   * Does one round of work; answers whether more is waiting (then it runs again at once). A long round checks
   * `stopping` and winds down when it turns true.
   */
  runOnce(round: { stopping(): boolean }): Promise<boolean>;
  /** The longest sleep between rounds when nothing wakes the task: the safety net under the wake-ups. */
  idleDelayMs: number;
  /** The work whose commit wakes the task at once. */
  wakeOn?: BackgroundWork;
}

export interface Worker {
  start(): void;
  /** Lets the rounds under way finish, then returns. */
  stop(): Promise<void>;
}

/** A source of wake-ups the worker runs while it runs (a LISTEN connection), answering how to stop it. */
export type WakeSource = () => { close(): Promise<void> };

/** Background loops of the `worker` role. Each task runs one round at a time and never overlaps itself. */
export function createWorker(
  tasks: readonly WorkerTask[],
  log: Logger,
  signal: WorkSignal,
  wakeSource?: WakeSource,
): Worker {
  let running = false;
  let source: ReturnType<WakeSource> | null = null;
  const loops: Promise<void>[] = [];

  async function loop(task: WorkerTask) {
    while (running) {
      let more = false;
      try {
        more = await task.runOnce({ stopping: () => !running });
      } catch (err) {
        log[failureLevel(err)]({ err, task: task.name }, 'worker task failed; retrying after its idle delay');
      }
      if (running && !more) await signal.wait(task.wakeOn, task.idleDelayMs);
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      source = wakeSource?.() ?? null;
      for (const task of tasks) loops.push(loop(task));
      log.info({ tasks: tasks.map((t) => t.name) }, 'worker started');
    },
    async stop() {
      running = false;
      signal.interrupt();
      await Promise.all(loops.splice(0));
      await source?.close();
      source = null;
    },
  };
}
