/**
 * How soon after the first a repeat of the same signal is the same stop. `npm start` stays the service's parent and
 * relays SIGINT and SIGTERM to it, while a terminal's Ctrl-C (and a service manager stopping the group) signals node
 * too: one stop arrives twice, a few milliseconds apart.
 */
const SAME_SIGNAL_WITHIN_MS = 1000;

/**
 * SIGTERM and SIGINT: the first stops; a later one hurries the stop (skips what is left of SHUTDOWN_DELAY_MS), unless
 * it is the same signal again within SAME_SIGNAL_WITHIN_MS.
 */
export function onStopSignals(stop: (signal: string) => void, hurry: () => void, now = Date.now): void {
  let first: { signal: string; at: number } | null = null;
  const on = (signal: 'SIGTERM' | 'SIGINT') => {
    if (first === null) {
      first = { signal, at: now() };
      return stop(signal);
    }
    if (signal === first.signal && now() - first.at < SAME_SIGNAL_WITHIN_MS) return;
    hurry();
  };
  process.on('SIGTERM', () => on('SIGTERM'));
  process.on('SIGINT', () => on('SIGINT'));
}
