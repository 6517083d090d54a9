import type { DeliveryAttempt } from '../domain/delivery.ts';
import type { Clock, Deps, WebhookSender } from '../domain/ports.ts';
import { attemptDelivery, claimDueDeliveries, recordDeliveries } from '../domain/use-cases/deliver-events.ts';
import { mailEndpointNotices } from '../domain/use-cases/mail-endpoint-notices.ts';
import type { Services } from './services.ts';

/** One attempt's outcome in a script: what it found, whenever it is made. */
type ScriptedOutcome = Omit<DeliveryAttempt, 'at'>;

/** The demo partner's endpoint: a reserved name (RFC 2606), so that nothing is ever sent anywhere. */
export const DEMO_ENDPOINT_URL = 'https://installer-hooks.demo.example/webhooks';

/** What the demo's endpoint answered, attempt by attempt: down for maintenance, then broken, then silent. */
const DEMO_OUTCOMES: readonly ScriptedOutcome[] = [
  { statusCode: 503, durationMs: 41, error: 'HTTP 503: Service Unavailable: scheduled maintenance' },
  { statusCode: 503, durationMs: 38, error: 'HTTP 503: Service Unavailable: scheduled maintenance' },
  { statusCode: 500, durationMs: 212, error: 'HTTP 500: {"error":"orders table is locked"}' },
  { statusCode: 500, durationMs: 187, error: 'HTTP 500: {"error":"orders table is locked"}' },
  { statusCode: null, durationMs: 10_000, error: 'timeout: no complete answer within 10000 ms' },
];

/** A sender that answers from a script on a given clock (the composition root's ScriptedWebhookSender). */
export type ScriptedSenders = (script: readonly ScriptedOutcome[], clock: Clock) => WebhookSender;

/** Deliveries claimed at once while looking for the demo's (one per endpoint): others due are given back. */
const CLAIM_LIMIT = 100;

/** How long ago the demo's history starts: its attempts all lie in the past, the last an hour ago. */
export const historyLength = (scheduleMs: readonly number[]) => scheduleMs.reduce((sum, ms) => sum + ms, 0) + 3_600_000;

/**
 * A delivery's whole history, for the demo: the demo endpoint's one delivery goes through every attempt of
 * WEBHOOK_RETRY_SCHEDULE
 * from `start` on, to failed, by the worker's own steps (claim, attempt, record, mail) on a clock that moves to each
 * attempt's time, with a sender that answers from the script above instead of the network. Its endpoint is then
 * failing, and its contacts have had the mail the worker sends. Answers the delivery's id (null: none was due).
 */
export async function seedDeliveryHistory(
  services: Services,
  scripted: ScriptedSenders,
  endpointId: string,
  start: Date,
): Promise<string | null> {
  const { webhookRetryScheduleMs: scheduleMs, webhookDisableAfterMs } = services.config;
  let at = start;
  const clock: Clock = { now: () => at };
  const webhookSender = scripted(DEMO_OUTCOMES, clock);
  return services.unitOfWork().statements(async (real) => {
    const deps: Deps = Object.create(real, { clock: { value: clock }, webhookSender: { value: webhookSender } });
    let deliveryId: string | null = null;
    for (;;) {
      // Only the demo endpoint's: a database may hold other deliveries due, which are given back at once, untouched.
      const claimed = await claimDueDeliveries(deps, {
        limit: CLAIM_LIMIT,
        leaseMs: 60_000,
        perEndpoint: 1,
        held: new Map(),
        lookForNew: true,
      });
      const delivery = claimed.find((d) => d.endpointId === endpointId && (deliveryId === null || d.id === deliveryId));
      await deps.deliveryQueue.release(claimed.filter((d) => d !== delivery));
      if (!delivery) return deliveryId;
      deliveryId = delivery.id;
      const result = await attemptDelivery(deps, delivery, scheduleMs);
      const notices = await recordDeliveries(deps, [result], webhookDisableAfterMs);
      const mailFailed = (err: unknown) => services.log.warn({ err }, "the demo endpoint's failure mail was not sent");
      await mailEndpointNotices(deps, notices, mailFailed);
      if (result.state.status !== 'pending') return deliveryId;
      at = result.state.nextAttemptAt;
    }
  });
}
