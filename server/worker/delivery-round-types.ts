// What a delivery round (server/worker/delivery-round.ts) is given: the domain's services it uses, the policy it sends
// by, the ports of the process it runs in, and the pace it keeps.
import type { ClaimedDelivery, DeliveryResult } from '../../domain/delivery.ts';
import type { EndpointNotice } from '../../domain/endpoint-health.ts';
import type { Deps } from '../../domain/ports.ts';

export const ROUND_PACE = {
  /** How often a round looks for more while sends are under way (a wake-up comes sooner). */
  refillMs: 50,
  /**
   * How long a busy round (one that never waits) claims from what is queued before it looks for new ones again when
   * none were announced: an announcement lost on its way (a listener reconnecting) delays them by this at most.
   */
  lookEveryMs: 1000,
  /** How long a round waits before using the database again after it failed. */
  databaseBackoffMs: 1000,
} as const;

export type DeliveryDeps = Pick<
  Deps,
  'deliveryQueue' | 'webhookSender' | 'clock' | 'ids' | 'contacts' | 'mailer' | 'links'
>;

export interface DeliveryPolicy {
  /** WEBHOOK_MAX_IN_FLIGHT: deliveries being sent at once by this process. */
  maxInFlight: number;
  /** WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: of those, to one endpoint (CONTRACT §7: no endpoint slows another). */
  maxInFlightPerEndpoint: number;
  /** The longest one attempt can take, its re-send on a new connection included. */
  attemptMs: number;
  /** An attempt this long holds its endpoint back (held-back-endpoints.ts): half of WEBHOOK_TIMEOUT_MS. */
  slowMs: number;
  /**
   * How long a claim holds: a dead sender's deliveries are sent again after it. Longer than an attempt, so that a
   * claim waiting in the buffer still has an attempt's time left when its turn comes (else it is given back).
   */
  leaseMs: number;
  /** WEBHOOK_RETRY_SCHEDULE: the delays between durable attempts. */
  scheduleMs: readonly number[];
  /** WEBHOOK_DISABLE_AFTER: how long an endpoint may fail before a failed delivery disables it. */
  disableAfterMs: number;
  /**
   * A round that has nothing left to do waits for a due retry itself when it comes sooner than this (the idle poll).
   */
  idleMs: number;
}

/** What a round needs from the process it runs in: waiting, and telling what happened. */
export interface DeliveryRoundPorts {
  /**
   * Resolves once deliveries are announced (committed somewhere), after `ms` at the latest, or at once when stopping.
   */
  waitForWork(ms: number): Promise<void>;
  /**
   * Whether deliveries were announced since the last wait for work or the last time it was asked (the announcement is
   * taken): a busy round, which does not wait, asks before each claim whether to look for new ones.
   */
  announced(): boolean;
  /** Resolves after `ms`, or at once when stopping; an announcement does not cut it short (a backoff). */
  pause(ms: number): Promise<void>;
  /** Whether the process is stopping: the round gives back what it holds unsent and ends. */
  stopping(): boolean;
  /** Each finished attempt, as it finishes (metrics, the log). */
  attempted(delivery: ClaimedDelivery, result: DeliveryResult): void;
  /** What a record decided about an endpoint's health (the log), once it has committed and before it is mailed. */
  noticed(notice: EndpointNotice): void;
  /**
   * A step that failed (the database away, most likely): the round goes on; nothing is lost (leases run out). `about`
   * counts the deliveries concerned, and names the one when it is one (a send, a result recorded alone).
   */
  stepFailed(
    step: 'claim' | 'record' | 'give back' | 'send' | 'mail',
    error: unknown,
    about: { deliveries: number; deliveryId?: string },
  ): void;
}
