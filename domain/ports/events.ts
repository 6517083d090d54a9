import type {
  ClaimedDelivery,
  DeliveryDetail,
  DeliveryFilter,
  DeliveryResult,
  DeliveryStats,
  DeliveryView,
  StatsBucket,
} from '../delivery.ts';
import type { EndpointNotice } from '../endpoint-health.ts';
import type { OutboxEvent } from '../event.ts';

// Events: the transactional outbox, the deliveries it leaves, and the feed that reads them back in order.

/** Work that a unit of work leaves for the background worker: commands to execute, deliveries to send. */
export type BackgroundWork = 'commands' | 'deliveries';

export interface EventOutbox {
  /**
   * Stores the events in the current unit of work, with a pending delivery for each that is to be delivered: they
   * commit, or vanish, with the change that caused them.
   */
  add(events: readonly OutboxEvent[]): Promise<void>;
  /** The newest events addressed to an account, newest first (operators and tests). */
  recentFor(accountId: string, limit: number): Promise<OutboxEvent[]>;
}

/** What a sender asks of the queue: how many, from when, under which token, and what it holds already. */
export interface ClaimRequest {
  limit: number;
  now: Date;
  /** Each claim holds until then: a dead sender's deliveries are claimed again after it. */
  leaseUntil: Date;
  claimToken: string;
  /** The most deliveries of one endpoint the sender may hold at once (sending, or claimed and waiting to be sent). */
  perEndpoint: number;
  /** The endpoints the sender holds deliveries of now, with how many: a full one is passed over. */
  held: ReadonlyMap<string, number>;
  /**
   * Deliveries may have been committed since the sender's last claim (it waited for work, or was woken): the claim
   * takes them in first. False: it claims from what is queued already, which a claim refilling a busy sender does.
   */
  lookForNew: boolean;
}

/**
 * The queue the sender takes deliveries from (send, ack, nack): claimed under a lease, so that concurrent senders never
 * send one twice, and recorded by the holder of the claim.
 */
export interface DeliveryQueue {
  /**
   * Claims up to `limit` deliveries that are due at `now` and nobody holds, oldest first, each until `leaseUntil`, and
   * at most `perEndpoint` of one endpoint with what the sender holds. For one endpoint and one order, a delivery is not
   * due while one of an earlier feed position (CONTRACT §10) is still to be sent (being sent, or waiting for its
   * retry): one order's deliveries go out in feed order, whatever wrote them; other orders are not held up.
   */
  claimDue(request: ClaimRequest): Promise<ClaimedDelivery[]>;
  /** Gives claims back unsent (a sender stopping), so that they are due at once instead of after their lease. */
  release(claims: readonly Pick<ClaimedDelivery, 'id' | 'claimToken'>[]): Promise<void>;
  /**
   * Logs the attempts, and gives each delivery the state its attempt leaves, unless its claim is no longer the current
   * one (its lease ran out and another sender claimed it): then only the attempt is logged. In the same statement, each
   * endpoint's health follows what it answered (`judgeEndpoint`, endpoint-health.ts, with WEBHOOK_DISABLE_AFTER as
   * `disableAfterMs`); answers the notices its contacts are to be sent, once this has committed.
   */
  record(results: readonly DeliveryResult[], at: Date, disableAfterMs: number): Promise<EndpointNotice[]>;
  /**
   * Sets right what the queue keeps for its claims and a race left wrong: which deliveries wait for their endpoint
   * (disabled, or without a URL) or behind an earlier one of their order. Answers how many it set right. The claim's
   * own checks keep the rules meanwhile; a delivery left waiting by mistake waits until this runs.
   */
  settle(): Promise<number>;
}

/** The delivery log integrators and operators read, and the replays they ask for. */
export interface DeliveryLog {
  /**
   * Makes a delivery pending and due at `now` again, its attempts continuing, unless it is being sent right now (then
   * it is left to its sender). False when there is no such delivery.
   */
  redeliver(deliveryId: string, now: Date, endpointId?: string): Promise<boolean>;
  /**
   * Makes every failed delivery of the endpoint (or of the account, every endpoint) created at or after `since` pending
   * and due at `now` again; answers how many. Deliveries of one order still go out in their order (see `claimDue`).
   */
  redeliverFailed(of: { endpointId: string } | { accountId: string }, since: Date, now: Date): Promise<number>;
  /**
   * One delivery with its payload and what each attempt sent and got back; null when absent (or of another endpoint).
   */
  get(deliveryId: string, endpointId?: string): Promise<DeliveryDetail | null>;
  /** Deliveries newest first, with their attempts; `before` continues after a delivery of an earlier page. */
  list(filter: DeliveryFilter): Promise<DeliveryView[]>;
  /**
   * The endpoint's attempts (those sent) counted by UTC hour or day, every bucket from the one holding `from` to the
   * one holding `to` (empty ones too), oldest first.
   */
  stats(endpointId: string, from: Date, to: Date, bucket: StatsBucket): Promise<DeliveryStats[]>;
  /**
   * Deletes up to `limit` finished deliveries of events older than `before`, and up to `limit` such events left without
   * any delivery; answers the larger count (a full batch means more may be waiting). Pending deliveries are kept.
   */
  purgeBefore(before: Date, limit: number): Promise<number>;
  /** Makes ready where the history of the coming days will be kept (their partitions): the days after `from`'s. */
  prepareDays(from: Date): Promise<void>;
}

/** The event feed (CONTRACT §10): every event of an endpoint, in the order the events became visible. */
export interface EventFeed {
  /**
   * Gives up to `limit` committed events without a position their positions, in one round, unless another round is
   * under way (then nothing, 0): positions grow in the order events commit, and every round commits its positions at
   * once, so that a reader never passes a position that is filled in later. Outside a transaction the round is one of
   * its own, committed when it answers; inside the unit's transaction it commits with it. Answers how many got one.
   * `waitForRound`: a round under way is waited for, then this one runs (a reader's: that round's snapshot may be
   * older than what the reader saw commit).
   */
  sequence(limit: number, waitForRound?: boolean): Promise<number>;
  /**
   * The endpoint's positioned events after `afterPosition` (0: from the oldest), oldest first; one order's when given.
   * With them, read at the same moment, how far the retention purge has deleted the endpoint's events.
   */
  page(endpointId: string, afterPosition: number, limit: number, orderId?: string): Promise<FeedRead>;
}

export interface FeedRead {
  entries: FeedEntry[];
  /** The highest position of the endpoint's events that the retention purge has deleted (0: none). */
  purgedThrough: number;
}

export interface FeedEntry {
  position: number;
  createdAt: Date;
  /**
   * The payload exactly as delivered: the JSON text stored, never parsed on the way (a feed page passes it on as is).
   */
  payload: string;
}
