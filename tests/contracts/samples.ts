import { randomUUID } from 'node:crypto';
import { Account } from '../../domain/account.ts';
import type { ClaimedDelivery } from '../../domain/delivery.ts';
import { OutboxEvent } from '../../domain/event.ts';
import { Job } from '../../domain/job.ts';
import type { Repositories } from '../../domain/ports.ts';
import { type Scope, WebhookConfig, type WebhookConfigProps } from '../../domain/webhook-config.ts';

/** Runs work as one unit of work of the implementation under test. */
export type Run = <T>(work: (repositories: Repositories) => Promise<T>) => Promise<T>;

export const at = (iso: string) => new Date(iso);
/** A configuration's health before any attempt. */
export const NO_HEALTH = { failingSince: null, disabledReason: null, failureMailedAt: null } as const;
export const DAY = 24 * 3600 * 1000;
export const account = (role: 'brand' | 'partner' = 'brand', parentId: string | null = null) =>
  new Account({ id: randomUUID(), name: `acc ${role}`, role, parentId, createdAt: at('2026-01-01T00:00:00.000Z') });
/** An enabled configuration at `url`, without a signature key, made and last changed at `now`; `changes` on top. */
export const webhookConfig = (
  accountId: string,
  url: string,
  now: Date,
  scope: Scope = 'brand',
  changes: Partial<WebhookConfigProps> = {},
) =>
  new WebhookConfig({
    id: randomUUID(),
    accountId,
    scope,
    url,
    transformer: 'default',
    version: '1.3.0',
    signatureKey: null,
    enabled: true,
    ...NO_HEALTH,
    createdAt: now,
    updatedAt: now,
    ...changes,
  });
export const job = (brandAccountId: string, partnerId: string | null = null) =>
  new Job({
    apiId: `job-${randomUUID()}`,
    brandAccountId,
    partnerId,
    name: 'O-0000000001',
    status: 'open',
    invoicingEid: 'INV-1',
    eid: null,
    extPartnerId: null,
    customer: {
      email: 'c@example.com',
      externalId: null,
      firstName: 'Ada',
      lastName: 'L',
      mobilePhone: null,
      phone: null,
      salutation: null,
    },
    customerBilling: null,
    shippingAddress: { street: 'Main', houseNumber: '1', postalCode: '10115', city: 'Berlin', countryCode: 'DE' },
    products: [{ sku: 'S1', name: 'Box', quantity: 2 }],
    documents: [{ type: 'photo', files: [{ name: 'a.jpg', url: 'https://x/a.jpg' }] }],
    orderType: 'install',
    projectId: null,
    projectName: null,
    appointmentStart: at('2026-02-01T09:00:00.000Z'),
    appointmentEnd: null,
    startTimestamp: null,
    finishTimestamp: null,
    createdAt: at('2026-01-01T00:00:00.000Z'),
    updatedAt: at('2026-01-02T00:00:00.123Z'),
  });

/** A claim by a sender that holds nothing and may take any number of one endpoint. */
export const claimAll = (r: Repositories, limit: number, now: Date, leaseUntil: Date, claimToken: string) =>
  r.deliveryQueue.claimDue({
    limit,
    now,
    leaseUntil,
    claimToken,
    perEndpoint: 1_000_000,
    held: new Map(),
    lookForNew: true,
  });

/** Records what a claim took as delivered at `at`: a 200 on each one's first try. */
export const recordDelivered = (r: Repositories, claimed: readonly ClaimedDelivery[], at: Date) =>
  r.deliveryQueue.record(
    claimed.map((d) => ({
      deliveryId: d.id,
      endpointId: d.endpointId,
      claimToken: d.claimToken,
      createdAt: d.createdAt,
      attempt: { at, statusCode: 200, durationMs: 1, error: null },
      exchange: null,
      state: { status: 'delivered' as const },
    })),
    at,
    DAY,
  );

/** The `n`th event of an order of its own for `config`'s endpoint, written `n` ms after `now`; its payload says `n`. */
export const numberedEvent = (config: WebhookConfig, n: number, now: Date) =>
  orderEvent(config, `order-${randomUUID()}`, new Date(now.getTime() + n), { _eid: `e${n}`, n });

/** An event of order `orderId` for `config`'s endpoint, written at `now`; payload `{ _eid: orderId }` by default. */
export const orderEvent = (
  config: WebhookConfig,
  orderId: string,
  now: Date,
  payload: Record<string, unknown> = { _eid: orderId },
) =>
  new OutboxEvent({
    id: randomUUID(),
    accountId: config.accountId,
    scope: 'brand',
    type: 'OrderStatusEvent',
    orderId,
    payload,
    endpointId: config.id,
    deliver: true,
    createdAt: now,
  });

/** Saves a brand, its endpoint and their events in one unit of work. */
export const saveWithEvents = (run: Run, brand: Account, config: WebhookConfig, events: readonly OutboxEvent[]) =>
  run(async (r) => {
    await r.accounts.save(brand);
    await r.webhookConfigs.save(config);
    await r.events.add(events);
  });

/** A brand with an endpoint at `url`, and one event of its order `orderId` written at `now`: saved. */
export async function savedOrderEvent(run: Run, url: string, orderId: string, now: Date) {
  const brand = account();
  const config = webhookConfig(brand.id, url, now);
  const event = orderEvent(config, orderId, now);
  await saveWithEvents(run, brand, config, [event]);
  return { brand, config, event };
}
