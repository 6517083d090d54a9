// What the tests of the worker's delivery round (on the fakes) share: a policy, ports that report nothing, a brand
// with its endpoint, and an attempt's answer.
import type { SentAttempt } from '../../domain/delivery.ts';
import type { WebhookRequest } from '../../domain/ports.ts';
import { createAccount } from '../../domain/use-cases/create-account.ts';
import { upsertWebhookConfig } from '../../domain/use-cases/upsert-webhook-config.ts';
import type { DeliveryPolicy, DeliveryRoundPorts } from '../../server/worker/delivery-round-types.ts';
import type { FakeDeps } from '../fakes.ts';

export const POLICY: DeliveryPolicy = {
  maxInFlight: 2,
  maxInFlightPerEndpoint: 2,
  attemptMs: 1000,
  slowMs: 500,
  leaseMs: 2000,
  scheduleMs: [1000],
  idleMs: 1000,
  disableAfterMs: 5 * 86_400_000,
};
/** Ports that report nothing; a wait yields to timers, so that sends finishing on a timer are seen. */
export const quiet = (overrides: Partial<DeliveryRoundPorts> = {}): DeliveryRoundPorts => ({
  waitForWork: (ms) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, 2))),
  announced: () => false,
  pause: async () => {},
  stopping: () => false,
  attempted: () => {},
  noticed: () => {},
  stepFailed: () => {},
  ...overrides,
});

export async function brandWithEndpoint(deps: FakeDeps, name: string) {
  const brand = await createAccount(deps, { name, role: 'brand' });
  await upsertWebhookConfig(deps, {
    accountId: brand.id,
    scope: 'brand',
    url: `https://${name}.example.com/hooks`,
    transformer: 'default',
    version: '1.3.0',
  });
  return brand;
}

/** What an endpoint answered (`statusCode`), or that none came (null), as the sender reports it. */
export function answered(
  request: WebhookRequest,
  at: Date,
  statusCode: number | null,
  durationMs: number,
): SentAttempt {
  return {
    at,
    statusCode,
    durationMs,
    error: statusCode === null ? `timeout: no complete answer within ${durationMs} ms` : null,
    exchange: {
      request: { url: request.url, headers: {} },
      response: statusCode === null ? null : { headers: {}, body: '' },
    },
  };
}
