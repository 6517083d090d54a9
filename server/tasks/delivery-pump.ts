import { failureLevel } from '../logger.ts';
import type { ClaimedDelivery, DeliveryResult } from '../../domain/delivery.ts';
import type { Deps } from '../../domain/ports.ts';
import { attemptDelivery, claimDueDeliveries, recordDeliveries, releaseDeliveries } from '../../domain/use-cases/deliver-events.ts';
import { purgeRetainedEvents } from '../../domain/use-cases/purge-retained-events.ts';
import type { Services } from '../services.ts';
import type { WorkSignal } from '../work-signal.ts';
import type { WorkerTask } from '../worker.ts';

export interface PumpOptions {
  /** WEBHOOK_MAX_IN_FLIGHT: deliveries being sent at once by this process. */
  maxInFlight: number;
  /** The longest one attempt can take, its re-send on a new connection included. */
  attemptMs: number;
  /**
   * How long a claim holds: a dead sender's deliveries are sent again after it. Longer than an attempt, so that a
   * claim waiting in the buffer still has an attempt's time left when its turn comes (else it is given back).
   */
  leaseMs: number;
  /** WEBHOOK_RETRY_SCHEDULE: the delays between durable attempts. */
  scheduleMs: readonly number[];
  /** What a send needs: the sender and the clock, and no database. */
  sending: Pick<Deps, 'webhookSender' | 'clock'>;
}

/** How often the pump looks for more while sends are under way (a wake-up comes sooner). */
const REFILL_MS = 50;
/** How long the pump waits before using the database again after it failed. */
const DATABASE_BACKOFF_MS = 1000;

/**
 * Sends due deliveries, keeping up to `maxInFlight` under way, until nothing is due and nothing is under way.
 * Sends run outside any transaction (the embedded database has one connection, never held across a send). The
 * database sees two kinds of short statements, each at most one at a time: a claim that tops up a buffer of claimed
 * deliveries to twice `maxInFlight` once it has fallen to one `maxInFlight`, so that a finished send is followed by the
 * next at once instead of by a claim's round trip; and one record of every attempt that finished while the previous
 * record ran, so that sending never waits for bookkeeping either.
 */
export function deliveryPump(services: Services, signal: WorkSignal, options: PumpOptions): WorkerTask {
  const holdAtMost = 2 * options.maxInFlight;
  return {
    name: 'webhook delivery',
    wakeOn: 'deliveries',
    idleDelayMs: 1000,
    async runOnce({ stopping }) {
      let inFlight = 0;
      const claimedNotSent: ClaimedDelivery[] = [];
      const finished: DeliveryResult[] = [];
      let recording: Promise<void> | null = null;
      let drained = false;
      let watching = false;
      // The soonest retry this round scheduled (ms after its try): waited for here when it comes before the idle poll.
      let soonestRetry = Infinity;
      let nudge = () => {};
      const changed = () => nudge();

      const record = (results: DeliveryResult[]) => services.unitOfWork().statements((deps) => recordDeliveries(deps, results))
        .then(() => {
          drained = false; // an outcome releases the next delivery of its order: look again at once, not at the next poll
          for (const { state, attempt } of results) {
            if (state.status === 'pending') soonestRetry = Math.min(soonestRetry, state.nextAttemptAt.getTime() - attempt.at.getTime());
          }
        }, async (err: unknown) => {
          // Unrecorded deliveries are sent again after their lease: at least once, even when the database stays away.
          services.log[failureLevel(err)]({ err, deliveries: results.length }, 'recording delivery attempts failed; trying again');
          if (!stopping()) finished.unshift(...results);
          await signal.wait(undefined, DATABASE_BACKOFF_MS);
        })
        .finally(() => { recording = null; changed(); });
      // New work is announced by a wake-up; due retries and expired leases are found by looking again now and then.
      const watchForWork = () => {
        if (watching) return;
        watching = true;
        void signal.wait('deliveries', REFILL_MS).then(() => { watching = false; drained = false; changed(); });
      };
      const send = (delivery: ClaimedDelivery) => {
        inFlight++;
        attemptDelivery(options.sending, delivery, options.scheduleMs)
          .then((result) => {
            finished.push(result);
            const { state, attempt } = result;
            services.metrics.deliveries.inc({ outcome: state.status === 'pending' ? 'retry_scheduled' : state.status });
            if (state.status === 'delivered') {
              services.metrics.deliveryLag.observe((attempt.at.getTime() + attempt.durationMs - delivery.createdAt.getTime()) / 1000);
            }
          })
          .catch((err: unknown) => services.log.error({ err, delivery: delivery.id }, 'delivery attempt failed; it is sent again after its lease'))
          .finally(() => { inFlight--; changed(); });
      };

      const giveBack = (claims: ClaimedDelivery[]) => services.unitOfWork().statements((deps) => releaseDeliveries(deps, claims))
        .catch((err: unknown) => services.log.warn({ err, deliveries: claims.length }, 'giving back claimed deliveries failed; they are sent after their lease'));

      for (;;) {
        // Given back unsent: all of them when stopping; and a claim without an attempt's time left on its lease, which,
        // sent now, could still be under way when another sender claims it over.
        const unsent = stopping() ? claimedNotSent.splice(0) : [];
        while (inFlight < options.maxInFlight && claimedNotSent.length > 0) {
          const next = claimedNotSent.shift()!;
          if (options.sending.clock.now().getTime() + options.attemptMs <= next.leaseUntil.getTime()) send(next);
          else unsent.push(next);
        }
        if (unsent.length > 0) {
          await giveBack(unsent);
          continue;
        }
        if (!recording && finished.length > 0) recording = record(finished.splice(0));
        const held = inFlight + claimedNotSent.length;
        if (!drained && !stopping() && held <= options.maxInFlight) {
          try {
            const claimed = await services.unitOfWork().statements((deps) => claimDueDeliveries(deps, holdAtMost - held, options.leaseMs));
            drained = claimed.length < holdAtMost - held;
            claimedNotSent.push(...claimed);
          } catch (err) {
            services.log[failureLevel(err)]({ err }, 'claiming deliveries failed; trying again shortly');
            await signal.wait(undefined, DATABASE_BACKOFF_MS);
          }
          continue;
        }
        if (inFlight === 0 && claimedNotSent.length === 0 && finished.length === 0 && !recording && (drained || stopping())) {
          if (stopping() || soonestRetry >= this.idleDelayMs) return false;
          await signal.wait('deliveries', soonestRetry);
          soonestRetry = Infinity;
          drained = false;
          continue;
        }
        if (drained) watchForWork();
        await new Promise<void>((resolve) => { nudge = resolve; });
      }
    },
  };
}

/** Deletes events and deliveries past EVENT_RETENTION_DAYS, a batch at a time, on the service's clock. */
export function eventRetentionPurge(services: Services, retentionDays: number, batch = 500): WorkerTask {
  return {
    name: 'event retention purge',
    idleDelayMs: 10_000,
    async runOnce() {
      return (await services.unitOfWork().transaction((deps) => purgeRetainedEvents(deps, retentionDays, batch))) === batch;
    },
  };
}
