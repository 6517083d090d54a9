import type { BackgroundWork } from '../../domain/ports.ts';

/**
 * The receiving end of the wake-ups (the sending end, and the listener that relays another process's, are in
 * adapters/persistence/wake-ups/). Wakes the worker's loops in this process when work of their kind was committed
 * (here, or by another process, relayed by the listener). Every wake-up is also kept until the next wait of its kind
 * or the next `take` (a busy delivery round asks before each claim), even when it woke a waiter: a loop that was woken
 * while it was already looking (its query may have started before the commit) looks once more before it sleeps,
 * instead of missing the work until its idle poll.
 */
export class WorkSignal {
  private readonly waiting = new Map<BackgroundWork, Set<() => void>>();
  private readonly pending = new Set<BackgroundWork>();

  wake(kinds: Iterable<BackgroundWork>): void {
    for (const kind of kinds) {
      this.pending.add(kind);
      for (const resolve of [...(this.waiting.get(kind) ?? [])]) resolve();
    }
  }

  /**
   * Resolves when work of this kind is announced, after `ms` at the latest, or at once if an announcement is pending.
   */
  wait(kind: BackgroundWork | undefined, ms: number): Promise<void> {
    if (kind && this.pending.delete(kind)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = kind ? (this.waiting.get(kind) ?? new Set<() => void>()) : new Set<() => void>();
      if (kind) this.waiting.set(kind, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        this.interrupts.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
      this.interrupts.add(done);
    });
  }

  /** Whether work of this kind was announced since its last wait or take; the announcement is taken. */
  take(kind: BackgroundWork): boolean {
    return this.pending.delete(kind);
  }

  /** Ends every wait at once (shutdown). */
  interrupt(): void {
    for (const done of [...this.interrupts]) done();
  }

  private readonly interrupts = new Set<() => void>();
}
