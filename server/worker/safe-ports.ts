import type { DeliveryRoundPorts } from './delivery-round-types.ts';

/**
 * The round's ports made safe to call from a send's, a record's or a give-back's handler or from the watch for work,
 * where a throw or a rejection would be unhandled, which ends the process.
 * - A report that throws (a logger's own failure) is dropped (the logger is what would tell of it), and the round goes
 *   on. What it concerned is unchanged: a failed send or record is sent again after its lease; an attempt or a notice
 *   is only missing from the log and the metrics.
 * - A wait that rejects is waited out on a plain timer (its `ms`, without a wake-up cutting it short), so that a
 *   wake-up channel that keeps failing slows the round to its polls instead of spinning it.
 * - A wait ends at once when stopping, as the ports promise: one begun after the stop's interrupt is not waited, and a
 *   failed wait's timer looks every 50 ms whether the process stops.
 */
export function withSafePorts(ports: DeliveryRoundPorts): DeliveryRoundPorts {
  const safely =
    <A extends unknown[]>(report: (...args: A) => void) =>
    (...args: A) => {
      try {
        report(...args);
      } catch {
        /* dropped: see above */
      }
    };
  const over = (wait: (ms: number) => Promise<void>) => async (ms: number) => {
    if (ports.stopping()) return;
    try {
      await wait(ms);
    } catch {
      const until = performance.now() + ms;
      while (!ports.stopping() && performance.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(50, until - performance.now())));
      }
    }
  };
  return {
    ...ports,
    waitForWork: over(ports.waitForWork),
    pause: over(ports.pause),
    attempted: safely(ports.attempted),
    noticed: safely(ports.noticed),
    stepFailed: safely(ports.stepFailed),
  };
}
