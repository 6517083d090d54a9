import { SpanKind } from '@opentelemetry/api';
import type { ClaimedDelivery, DeliveryResult } from '../../domain/delivery.ts';
import type { EndpointNotice } from '../../domain/endpoint-health.ts';
import { isUnavailable } from '../../domain/errors.ts';
import { attemptDelivery, claimDueDeliveries, recordDeliveries } from '../../domain/use-cases/deliver-events.ts';
import { mailEndpointNotices } from '../../domain/use-cases/mail-endpoint-notices.ts';
import { type DeliveryDeps, type DeliveryPolicy, type DeliveryRoundPorts, ROUND_PACE } from './delivery-round-types.ts';
import { EndpointCounts } from './endpoint-counts.ts';
import { HeldBackEndpoints } from './held-back-endpoints.ts';
import { HeldBackShare } from './held-back-share.ts';
import { withSafePorts } from './safe-ports.ts';
import { inStoredTrace, settleAttempt } from './spans.ts';

/**
 * The sender, one round: keep up to `maxInFlight` sends under way, at most `maxInFlightPerEndpoint` of them to one
 * endpoint, until nothing is due and nothing is under way. Sends run outside any transaction (the embedded database has
 * one connection, never held across a send). The database sees short statements: one claim at a time, which tops up a
 * buffer of claimed deliveries once what can be sent from it has fallen to one `maxInFlight`, so that a finished send
 * is followed by the next at once instead of by a claim's round trip; one record at a time, of every attempt that
 * finished while the previous record ran; and give-backs beside them: sending never waits for bookkeeping.
 *
 * An endpoint's deliveries wait in the buffer while it has its share of sends under way; the buffer holds at most as
 * many again of one endpoint (the claim passes a full endpoint over), so a silent endpoint's backlog never fills the
 * buffer, and the sends it cannot have go to the others. An endpoint held back (`endpoints`, which the process keeps
 * across rounds: see held-back-endpoints.ts) has one send and one delivery waiting, and those endpoints together at
 * most half the sends and as many waiting: a crowd of silent endpoints leaves the other half to the rest.
 */
export function deliverDueEvents(
  deps: DeliveryDeps,
  policy: DeliveryPolicy,
  ports: DeliveryRoundPorts,
  endpoints = new HeldBackEndpoints(policy.slowMs),
): Promise<void> {
  return new DeliveryRound(deps, policy, withSafePorts(ports), endpoints).run();
}

/** The deliveries a failed step concerned, as its report gives them. */
const about = (deliveries: readonly { id: string }[]) =>
  deliveries.length === 1 ? { deliveries: 1, deliveryId: deliveries[0]!.id } : { deliveries: deliveries.length };

/** One round's state: what it holds, sends, has finished and records; each step below is one thing it does. */
class DeliveryRound {
  private inFlight = 0;
  /** Sends under way, by endpoint. */
  private readonly sending = new EndpointCounts();
  /** Claimed and not sent yet, by endpoint with the sends under way: what the claim is told this round holds. */
  private readonly held = new EndpointCounts();
  private readonly claimedNotSent: ClaimedDelivery[] = [];
  private readonly finished: DeliveryResult[] = [];
  /** Results of a batch the store refused, recorded one by one. */
  private readonly oneByOne: DeliveryResult[] = [];
  private recording: Promise<void> | null = null;
  /** Mails being sent about endpoints' health: a round ends (and a stopping process waits) once they are out. */
  private mailing = 0;
  /** Gives back under way (giveBack). */
  private givingBack = 0;
  /** The last claim found less than it asked for: nothing more is due until a wake-up, a retry or an outcome. */
  private drained = false;
  /** Counts what made deliveries due again (an outcome recorded, a give-back): a claim under way meanwhile is stale. */
  private freed = 0;
  private watching = false;
  /**
   * New deliveries may have been committed: at the start, after a wait for work, once announced. A claim looks for
   * them only then (a look positions new events first, work even when there are none) or lookEveryMs after the last.
   */
  private mayBeNew = true;
  private lookedAt = 0;
  /** The soonest retry this round scheduled (ms after its try): waited for here when it comes before the idle poll. */
  private soonestRetry = Infinity;
  private nudge = () => {};
  private readonly heldBackShare: HeldBackShare;

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly policy: DeliveryPolicy,
    private readonly ports: DeliveryRoundPorts,
    private readonly heldBackEndpoints: HeldBackEndpoints,
  ) {
    this.heldBackShare = new HeldBackShare(heldBackEndpoints, policy.maxInFlight, this.held);
  }

  async run(): Promise<void> {
    for (;;) {
      this.sendOrGiveBack();
      this.startRecording();
      if (this.mayClaim()) {
        await this.topUp();
        continue;
      }
      if (this.idle()) {
        if (this.ports.stopping() || this.soonestRetry >= this.policy.idleMs) return;
        await this.ports.waitForWork(this.soonestRetry);
        this.soonestRetry = Infinity;
        this.drained = false;
        this.mayBeNew = true;
        continue;
      }
      if (this.drained) this.watchForWork();
      await new Promise<void>((resolve) => {
        this.nudge = resolve;
      });
    }
  }

  /**
   * Sends, in the order claimed, what the buffer holds while there is room, overall and at its endpoint; gives back
   * all of it when stopping, and any claim without an attempt's time left on its lease, which, sent now, could still be
   * under way when another sender claims it over.
   */
  private sendOrGiveBack(): void {
    const stopping = this.ports.stopping();
    const unsent: ClaimedDelivery[] = [];
    const now = this.deps.clock.now().getTime();
    for (let i = 0; i < this.claimedNotSent.length; ) {
      const next = this.claimedNotSent[i]!;
      if (stopping || now + this.policy.attemptMs > next.leaseUntil.getTime()) {
        unsent.push(...this.claimedNotSent.splice(i, 1));
      } else if (this.inFlight < this.policy.maxInFlight && this.hasRoom(next.endpointId)) {
        this.send(this.claimedNotSent.splice(i, 1)[0]!);
      } else {
        i++;
      }
    }
    for (const delivery of unsent) this.held.add(delivery.endpointId, -1);
    if (unsent.length > 0) this.giveBack(unsent);
  }

  /** Back to the queue beside the sends, which do not wait for it; a round ends after, and looks again at once. */
  private giveBack(deliveries: readonly ClaimedDelivery[]) {
    this.givingBack++;
    void this.deps.deliveryQueue
      .release(deliveries)
      .catch((error: unknown) => this.ports.stepFailed('give back', error, about(deliveries)))
      .finally(() => {
        this.givingBack--;
        this.freedAgain();
      });
  }

  private hasRoom = (endpointId: string) =>
    this.heldBackShare.fits(endpointId, this.sending.get(endpointId) ?? 0, this.policy.maxInFlightPerEndpoint);

  private send(delivery: ClaimedDelivery) {
    this.inFlight++;
    this.sending.add(delivery.endpointId, 1);
    const ended = this.heldBackShare.began(delivery.endpointId);
    inStoredTrace(
      delivery.trace,
      'POST webhook',
      SpanKind.CLIENT,
      (traceparent) => attemptDelivery(this.deps, delivery, this.policy.scheduleMs, traceparent),
      settleAttempt,
    )
      .then((result) => {
        this.finished.push(result);
        this.ports.attempted(delivery, result);
        // An attempt that sent nothing (the endpoint gone) says nothing of the endpoint.
        if (result.exchange) this.heldBackEndpoints.attempted(delivery, result.attempt);
      })
      // Unrecorded, it is sent again after its lease: at least once.
      .catch((error: unknown) => this.ports.stepFailed('send', error, about([delivery])))
      .finally(() => {
        this.inFlight--;
        ended();
        this.sending.add(delivery.endpointId, -1);
        this.held.add(delivery.endpointId, -1);
        this.nudge();
      });
  }

  /** One record at a time, of every attempt that finished meanwhile (after a refused batch, of one at a time). */
  private startRecording() {
    if (this.recording || (this.finished.length === 0 && this.oneByOne.length === 0)) return;
    const results = this.oneByOne.length > 0 ? this.oneByOne.splice(0, 1) : this.finished.splice(0);
    this.recording = recordDeliveries(this.deps, results, this.policy.disableAfterMs)
      .then(
        (notices) => {
          if (notices.length > 0) this.mail(notices);
          this.freedAgain(); // an outcome releases the next delivery of its order
          for (const { state, attempt } of results) {
            if (state.status === 'pending')
              this.soonestRetry = Math.min(this.soonestRetry, state.nextAttemptAt.getTime() - attempt.at.getTime());
          }
        },
        async (error: unknown) => {
          // Unrecorded deliveries are sent again after their lease: at least once, even when the database stays away.
          this.ports.stepFailed('record', error, about(results.map((r) => ({ id: r.deliveryId }))));
          if (isUnavailable(error)) {
            if (!this.ports.stopping()) this.finished.unshift(...results);
            await this.ports.pause(ROUND_PACE.databaseBackoffMs);
          } else if (results.length > 1) {
            // A result the store refuses must not hold the others back: they are recorded one by one next.
            this.oneByOne.push(...results);
          } // else that one is given up: sent again after its lease.
        },
      )
      .finally(() => {
        this.recording = null;
        this.nudge();
      });
  }

  /** Committed: the mails go out beside the sends, which do not wait for them. */
  private mail(notices: readonly EndpointNotice[]) {
    for (const notice of notices) this.ports.noticed(notice);
    this.mailing++;
    void mailEndpointNotices(this.deps, notices, (error, notice) =>
      this.ports.stepFailed('mail', error, { deliveries: notice.failedDeliveries }),
    ).finally(() => {
      this.mailing--;
      this.nudge();
    });
  }

  /** Claimed deliveries that could be sent once a send finishes: those whose endpoint has room. */
  private sendable() {
    let n = 0;
    for (const delivery of this.claimedNotSent) if (this.hasRoom(delivery.endpointId)) n++;
    return n;
  }

  private mayClaim() {
    return (
      !this.drained &&
      !this.ports.stopping() &&
      this.room() > 0 &&
      this.inFlight + this.sendable() <= this.policy.maxInFlight
    );
  }

  /** The buffer holds at most twice `maxInFlight`, sends under way included. */
  private room() {
    return 2 * this.policy.maxInFlight - this.inFlight - this.claimedNotSent.length;
  }

  /** Tops the buffer up; of one endpoint, to its share of sends and as many waiting. */
  private async topUp() {
    const [room, freed] = [this.room(), this.freed];
    try {
      const perEndpoint = 2 * this.policy.maxInFlightPerEndpoint;
      if (this.ports.announced()) this.mayBeNew = true;
      const lookForNew = this.mayBeNew || performance.now() - this.lookedAt >= ROUND_PACE.lookEveryMs;
      if (lookForNew) [this.mayBeNew, this.lookedAt] = [false, performance.now()];
      const told = this.heldBackShare.told(perEndpoint, this.deps.clock.now().getTime());
      const claimed = await claimDueDeliveries(this.deps, {
        limit: room,
        leaseMs: this.policy.leaseMs,
        perEndpoint,
        held: told,
        lookForNew,
      });
      // Short because an endpoint's room filled (its backlog took the claim's window) is not drained: the next claim
      // passes that endpoint over and finds the others' due deliveries.
      const filled = new EndpointCounts(told);
      for (const d of claimed) filled.add(d.endpointId, 1);
      const { kept, excess } = this.heldBackShare.admit(claimed, this.deps.clock.now().getTime());
      for (const delivery of kept) this.held.add(delivery.endpointId, 1);
      this.claimedNotSent.push(...kept);
      this.drained =
        freed === this.freed && claimed.length < room && !claimed.some((d) => filled.get(d.endpointId)! >= perEndpoint);
      if (excess.length > 0) this.giveBack(excess);
    } catch (error) {
      this.mayBeNew = true; // a look it made did not happen
      this.ports.stepFailed('claim', error, about([]));
      await this.ports.pause(ROUND_PACE.databaseBackoffMs);
    }
  }

  private idle() {
    return (
      this.inFlight === 0 &&
      this.claimedNotSent.length === 0 &&
      this.finished.length === 0 &&
      this.oneByOne.length === 0 &&
      !this.recording &&
      this.mailing === 0 &&
      this.givingBack === 0 &&
      (this.drained || this.ports.stopping())
    );
  }

  /** Deliveries are due again: look again at once, not at the next poll, even if a claim under way comes back short. */
  private freedAgain() {
    this.freed++;
    this.drained = false;
    this.nudge();
  }

  /** New work is announced by a wake-up; due retries and expired leases are found by looking again now and then. */
  private watchForWork() {
    if (this.watching) return;
    this.watching = true;
    void this.ports.waitForWork(ROUND_PACE.refillMs).then(() => {
      this.watching = false;
      this.drained = false;
      this.mayBeNew = true;
      this.nudge();
    });
  }
}
