import type { Logger } from './logger.ts';

export interface WorkerTask {
  name: string;
  /** Does one round of work; answers whether more is waiting (then it runs again at once). */
  runOnce(): Promise<boolean>;
  idleDelayMs: number;
}

export interface Worker {
  start(): void;
  /** Lets the rounds under way finish, then returns. */
  stop(): Promise<void>;
}

/** Background loops of the `worker` role. Each task runs one round at a time and never overlaps itself. */
export function createWorker(tasks: readonly WorkerTask[], log: Logger): Worker {
  let running = false;
  const loops: Promise<void>[] = [];
  const wakers = new Set<() => void>();
  const sleep = (ms: number) => new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() { clearTimeout(timer); wakers.delete(done); resolve(); }
    wakers.add(done);
  });

  async function loop(task: WorkerTask) {
    while (running) {
      let more = false;
      try {
        more = await task.runOnce();
      } catch (err) {
        log.error({ err, task: task.name }, 'worker task failed; retrying after its idle delay');
      }
      if (running && !more) await sleep(task.idleDelayMs);
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      for (const task of tasks) loops.push(loop(task));
      log.info({ tasks: tasks.map((t) => t.name) }, 'worker started');
    },
    async stop() {
      running = false;
      for (const wake of [...wakers]) wake();
      await Promise.all(loops.splice(0));
    },
  };
}
