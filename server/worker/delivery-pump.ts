import { failureLevel } from '../logger.ts';
import { deliverDueEvents, type DeliveryPolicy } from '../../domain/use-cases/deliver-events.ts';
import { purgeRetainedEvents } from '../../domain/use-cases/purge-retained-events.ts';
import type { Services } from '../services.ts';
import type { WorkSignal } from './work-signal.ts';
import type { WorkerTask } from './worker.ts';

const STEP_FAILED = {
  claim: 'claiming deliveries failed; trying again shortly',
  record: 'recording delivery attempts failed; trying again',
  'give back': 'giving back claimed deliveries failed; they are sent after their lease',
  send: 'delivery attempt failed; it is sent again after its lease',
} as const;

/**
 * Sends due webhooks: each round is the domain's story (deliverDueEvents, domain/use-cases/deliver-events.ts) in a
 * unit of work of its own, outside any transaction; this task only loops, wakes it and tells what it did.
 */
export function deliveryPump(services: Services, signal: WorkSignal, policy: Omit<DeliveryPolicy, 'idleMs'>): WorkerTask {
  const idleDelayMs = 1000;
  return {
    name: 'webhook delivery',
    wakeOn: 'deliveries',
    idleDelayMs,
    async runOnce({ stopping }) {
      await services.unitOfWork().statements((deps) => deliverDueEvents(deps, { ...policy, idleMs: idleDelayMs }, {
        waitForWork: (ms) => signal.wait('deliveries', ms),
        pause: (ms) => signal.wait(undefined, ms),
        stopping,
        attempted: (delivery, { state, attempt }) => {
          services.metrics.deliveries.inc({ outcome: state.status === 'pending' ? 'retry_scheduled' : state.status });
          if (state.status === 'delivered') {
            services.metrics.deliveryLag.observe((attempt.at.getTime() + attempt.durationMs - delivery.createdAt.getTime()) / 1000);
          }
        },
        stepFailed: (step, err, about) => {
          const level = step === 'send' ? 'error' : step === 'give back' ? 'warn' : failureLevel(err);
          services.log[level]({ err, ...about }, STEP_FAILED[step]);
        },
      }));
      return false;
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
