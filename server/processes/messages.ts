// What the primary and the processes it forks (its members) tell each other over the cluster's IPC channel. Every
// message carries `pbi`, so that nothing else on the channel is taken for one.

/** A registry's metrics as prom-client's getMetricsAsJSON gives them, for AggregatorRegistry.aggregate. */
export type MetricsJson = unknown[];

/** From a member to the primary. */
export type MemberMessage =
  /** Its app is built: an API process now waits for `listen`; a worker has started its work. */
  | { pbi: 'built' }
  /** It serves on the shared port. */
  | { pbi: 'listening' }
  /** An API process answering GET /metrics asks for every process's metrics. */
  | { pbi: 'scrape'; id: number }
  /** Its own metrics, for the primary's scrape `id`. */
  | { pbi: 'report'; id: number; metrics: MetricsJson }
  /**
   * Its start cannot work (a setting, the database): the one line that says why, for the primary to print once
   * however many processes meet the same cause. It exits 1 once sent.
   */
  | { pbi: 'refused'; line: string };

/** From the primary to a member. */
export type PrimaryMessage =
  /** Join the shared port (an API process, once built). */
  | { pbi: 'listen' }
  /** Drain and exit, as one process does on SIGTERM. */
  | { pbi: 'stop' }
  /** A second signal: end SHUTDOWN_DELAY_MS now. */
  | { pbi: 'hurry' }
  /** Send your own metrics for scrape `id`. */
  | { pbi: 'report?'; id: number }
  /**
   * The answer to a member's scrape: every process's metrics in Prometheus' text format, or null if they could not be
   * had.
   */
  | { pbi: 'scraped'; id: number; text: string | null };

const isOurs = (message: unknown): boolean =>
  typeof message === 'object' && message !== null && typeof (message as { pbi?: unknown }).pbi === 'string';

export const isMemberMessage = (message: unknown): message is MemberMessage => isOurs(message);
export const isPrimaryMessage = (message: unknown): message is PrimaryMessage => isOurs(message);
