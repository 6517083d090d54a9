import type { ClaimedDelivery, DeliveryResult } from '../../domain/delivery.ts';
import type { EndpointNotice } from '../../domain/endpoint-health.ts';
import { purgeRetainedEvents } from '../../domain/use-cases/purge-retained-events.ts';
import { settleDeliveryQueue } from '../../domain/use-cases/settle-delivery-queue.ts';
import { failureLevel, type Logger } from '../logger.ts';
import type { Services } from '../services.ts';
import { deliverDueEvents } from './delivery-round.ts';
import type { DeliveryPolicy } from './delivery-round-types.ts';
import { HeldBackEndpoints } from './held-back-endpoints.ts';
import type { WorkSignal } from './wake-up-signal.ts';
import type { WorkerTask } from './worker.ts';

const STEP_FAILED = {
  claim: 'claiming deliveries failed; trying again shortly',
  record: 'recording delivery attempts failed; trying again',
  'give back': 'giving back claimed deliveries failed; they are sent after their lease',
  send: 'delivery attempt failed; it is sent again after its lease',
  mail: "mailing an endpoint's contacts about its health failed; its state is stored",
} as const;

/**
 * Sends due webhooks: each round (deliverDueEvents, ./delivery-round.ts) runs the domain's steps in a unit of work of
 * its own, outside any transaction; this task only loops, wakes it and tells what it did.
 */
export function deliveryPump(
  services: Services,
  signal: WorkSignal,
  policy: Omit<DeliveryPolicy, 'idleMs'>,
): WorkerTask {
  const idleDelayMs = 1000;
  const endpoints = new HeldBackEndpoints(policy.slowMs, (endpoint, heldBack) =>
    logStanding(services.log, endpoint, heldBack),
  );
  return {
    name: 'webhook delivery',
    wakeOn: 'deliveries',
    idleDelayMs,
    async runOnce({ stopping }) {
      await services.unitOfWork().statements((deps) =>
        deliverDueEvents(
          deps,
          { ...policy, idleMs: idleDelayMs },
          {
            waitForWork: (ms) => signal.wait('deliveries', ms),
            announced: () => signal.take('deliveries'),
            pause: (ms) => signal.wait(undefined, ms),
            stopping,
            attempted: (delivery, result) => {
              const { state, attempt } = result;
              logAttempt(services.log, delivery, result);
              services.metrics.deliveries.inc({
                outcome: state.status === 'pending' ? 'retry_scheduled' : state.status,
              });
              if (state.status === 'delivered') {
                services.metrics.deliveryLag.observe(
                  (attempt.at.getTime() + attempt.durationMs - delivery.createdAt.getTime()) / 1000,
                );
              }
            },
            noticed: (notice) => logNotice(services.log, notice),
            stepFailed: (step, err, about) => {
              const level =
                step === 'send' || step === 'mail' ? 'error' : step === 'give back' ? 'warn' : failureLevel(err);
              services.log[level]({ err, ...about }, STEP_FAILED[step]);
            },
          },
          endpoints,
        ),
      );
      return false;
    },
  };
}

/**
 * One line per attempt: info when delivered, warn when not, with what the endpoint answered and what happens next.
 * The host only (a URL's path or query may hold a receiver's secret), the status or the connection's error (never the
 * answer's body), and never the payload or the key.
 */
function logAttempt(log: Logger, delivery: ClaimedDelivery, { attempt, state }: DeliveryResult): void {
  const fields = {
    delivery: delivery.id,
    event: delivery.eventId,
    host: hostOf(delivery.endpoint?.url),
    attempt: delivery.attempts + 1,
    ...(attempt.statusCode !== null ? { status: attempt.statusCode } : { error: attempt.error }),
    durationMs: attempt.durationMs,
  };
  if (state.status === 'delivered') {
    log.info(fields, `webhook delivered to ${fields.host} (HTTP ${attempt.statusCode}, attempt ${fields.attempt})`);
    return;
  }
  const what = attempt.statusCode !== null ? `HTTP ${attempt.statusCode}` : attempt.error;
  if (state.status === 'pending') {
    log.warn(
      { ...fields, nextAttemptAt: state.nextAttemptAt.toISOString() },
      `webhook delivery to ${fields.host} failed (${what}, attempt ${fields.attempt}); next attempt at ${state.nextAttemptAt.toISOString()}`,
    );
  } else {
    log.warn(
      { ...fields, failed: true },
      `webhook delivery to ${fields.host} failed for good (${what}, attempt ${fields.attempt}); ` +
        'the integrator can redeliver it (POST /v3/webhook-deliveries/redeliver-failed)',
    );
  }
}

/** An endpoint this process holds back to one send at a time, or lets have its whole share again. */
function logStanding(log: Logger, endpoint: { id: string; url: string | null }, heldBack: boolean): void {
  const fields = { endpoint: endpoint.id, host: hostOf(endpoint.url), heldBack };
  if (heldBack)
    log.warn(
      fields,
      `webhook endpoint at ${fields.host} held back to one send at a time: it is failing, or answers slowly`,
    );
  else log.info(fields, `webhook endpoint at ${fields.host} no longer held back: its whole share of sends again`);
}

/** An endpoint that starts failing, or is disabled for it: what its contacts are mailed, for the operators too. */
function logNotice(log: Logger, notice: EndpointNotice): void {
  const fields = {
    endpoint: notice.endpointId,
    account: notice.accountId,
    host: hostOf(notice.url),
    failingSince: notice.failingSince.toISOString(),
    failedDeliveries: notice.failedDeliveries,
  };
  const what = notice.kind === 'disabled' ? 'disabled: it has failed' : 'failing';
  log.warn(
    fields,
    `webhook endpoint at ${fields.host} ${what} since ${fields.failingSince} (${notice.failedDeliveries} failed deliveries); mailing its contacts`,
  );
}

const hostOf = (url: string | null | undefined) => {
  if (!url) return 'no endpoint';
  try {
    return new URL(url).host;
  } catch {
    return 'an endpoint with an invalid URL';
  }
};

/**
 * Sets right the delivery queue's flags a race left wrong, every `everyMs`: a pass over the whole queue, 0.5 s of the
 * server's time for 300,000 queued rows, which it cost before with every batch of the retention purge, back to back
 * while a purge had more to do. A delivery left waiting by such a race waits at most this long.
 */
export function deliveryQueueSweep(services: Services, everyMs = 30_000): WorkerTask {
  return {
    name: 'delivery queue sweep',
    idleDelayMs: everyMs,
    async runOnce() {
      await services.unitOfWork().statements((deps) => settleDeliveryQueue(deps));
      return false;
    },
  };
}

/**
 * Deletes events and deliveries past EVENT_RETENTION_DAYS, a batch at a time, on the service's clock. Each statement
 * commits on its own: a day's drop holds its locks for that statement alone, not for the batches of rows after it.
 */
export function eventRetentionPurge(services: Services, retentionDays: number, batch = 500): WorkerTask {
  return {
    name: 'event retention purge',
    idleDelayMs: 10_000,
    async runOnce() {
      return (
        (await services.unitOfWork().statements((deps) => purgeRetainedEvents(deps, retentionDays, batch))) === batch
      );
    },
  };
}
