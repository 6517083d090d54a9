import type { DeliveryResult } from '../../domain/delivery.ts';
import { attemptDelivery, claimDueDeliveries, recordDeliveries } from '../../domain/use-cases/deliver-events.ts';
import { purgeRetainedEvents } from '../../domain/use-cases/purge-retained-events.ts';
import type { Services } from '../services.ts';
import type { WorkSignal } from '../work-signal.ts';
import type { WorkerTask } from '../worker.ts';

export interface PumpOptions {
  /** WEBHOOK_MAX_IN_FLIGHT: deliveries being sent at once by this process. */
  maxInFlight: number;
  /** How long a claim holds: longer than any attempt can take; a dead sender's deliveries are sent again after it. */
  leaseMs: number;
  /** WEBHOOK_RETRY_SCHEDULE: the delays between durable attempts. */
  scheduleMs: readonly number[];
}

/** How often the pump looks for more while sends are under way (a wake-up comes sooner). */
const REFILL_MS = 50;

/**
 * Sends due deliveries, keeping up to `maxInFlight` under way: claims (one short statement), sends outside any
 * transaction (the embedded database has one connection, never held across a send), and records the attempts of
 * whatever finished in one statement, over and over until nothing is due and nothing is under way.
 */
export function deliveryPump(services: Services, signal: WorkSignal, options: PumpOptions): WorkerTask {
  return {
    name: 'webhook delivery',
    wakeOn: 'deliveries',
    idleDelayMs: 1000,
    async runOnce({ stopping }) {
      const inFlight = new Set<Promise<void>>();
      const finished: DeliveryResult[] = [];
      let drained = false;
      // The soonest retry this round scheduled (ms after its try): waited for here when it comes before the idle poll.
      let soonestRetry = Infinity;
      for (;;) {
        if (finished.length > 0) {
          const results = finished.splice(0);
          await services.autocommit((deps) => recordDeliveries(deps, results));
          for (const { state, tries } of results) {
            if (state.status === 'pending') soonestRetry = Math.min(soonestRetry, state.nextAttemptAt.getTime() - tries.at(-1)!.at.getTime());
          }
        }
        const room = options.maxInFlight - inFlight.size;
        if (room > 0 && !drained && !stopping()) {
          const claimed = await services.autocommit((deps) => claimDueDeliveries(deps, room, options.leaseMs));
          drained = claimed.length < room;
          for (const delivery of claimed) {
            const sending: Promise<void> = services.read((deps) => attemptDelivery(deps, delivery, options.scheduleMs))
              .then((result) => { finished.push(result); })
              .catch((err: unknown) => services.log.error({ err, delivery: delivery.id }, 'delivery attempt failed; it is sent again after its lease'))
              .finally(() => inFlight.delete(sending));
            inFlight.add(sending);
          }
        }
        if (inFlight.size === 0 && finished.length === 0 && (drained || stopping())) {
          if (stopping() || soonestRetry >= this.idleDelayMs) return false;
          await signal.wait('deliveries', soonestRetry);
          soonestRetry = Infinity;
          drained = false;
          continue;
        }
        await Promise.race([...inFlight, signal.wait('deliveries', REFILL_MS).then(() => { drained = false; })]);
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
      return (await services.transact((deps) => purgeRetainedEvents(deps, retentionDays, batch))) === batch;
    },
  };
}
