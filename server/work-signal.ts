import type { BackgroundWork } from '../domain/ports.ts';

/**
 * Wakes the worker's loops in this process when work of their kind was committed (here, or by another process,
 * relayed by a listener). A wake-up that comes while a loop is busy is kept, so that it is not lost between the
 * loop finding nothing and going to sleep.
 */
export class WorkSignal {
  private readonly waiting = new Map<BackgroundWork, Set<() => void>>();
  private readonly pending = new Set<BackgroundWork>();

  wake(kinds: Iterable<BackgroundWork>): void {
    for (const kind of kinds) {
      const waiters = this.waiting.get(kind);
      if (waiters?.size) for (const resolve of [...waiters]) resolve();
      else this.pending.add(kind);
    }
  }

  /** Resolves when work of this kind is announced, after `ms` at the latest, or at once if an announcement is pending. */
  wait(kind: BackgroundWork | undefined, ms: number): Promise<void> {
    if (kind && this.pending.delete(kind)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = kind ? this.waiting.get(kind) ?? new Set<() => void>() : new Set<() => void>();
      if (kind) this.waiting.set(kind, waiters);
      const done = () => { clearTimeout(timer); waiters.delete(done); this.interrupts.delete(done); resolve(); };
      const timer = setTimeout(done, ms);
      waiters.add(done);
      this.interrupts.add(done);
    });
  }

  /** Ends every wait at once (shutdown). */
  interrupt(): void {
    for (const done of [...this.interrupts]) done();
  }

  private readonly interrupts = new Set<() => void>();
}
