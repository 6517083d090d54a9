import { randomUUID } from 'node:crypto';
import type { Test } from 'uvu';
import { appWithMailbox } from '../../support/integrators.ts';
import type { Received } from '../../support/receiver.ts';

// What the suites of webhook delivery share: an app whose worker delivers from the outbox and retries on a short
// schedule, the admin calls that set up accounts and orders, and the reads of what was received and logged.
type App = Awaited<ReturnType<typeof appWithMailbox>>;
export let app: App;

/** Gives a suite the app, its worker started and stopped after the last test. */
export function withDeliveryApp(test: Test) {
  test.before(async () => {
    app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '150ms,150ms,150ms', WEBHOOK_TIMEOUT_MS: '2000' });
    app.worker.start();
  });
  test.after(() => app.worker.stop());
}

export const account = async (role: 'brand' | 'partner', parentId?: string) =>
  (
    await app.admin.call<{ id: string }>('accounts.create', {
      name: `${role} ${randomUUID().slice(0, 6)}`,
      role,
      ...(parentId && { parentId }),
    })
  ).id;
export const configure = (
  accountId: string,
  scope: 'brand' | 'partner',
  url: string | null,
  extra: Record<string, unknown> = {},
) =>
  app.admin.call('webhookConfigs.upsert', {
    accountId,
    scope,
    url,
    transformer: scope === 'brand' ? 'default' : 'partner-format',
    version: '1.3.0',
    ...extra,
  });
export const createJob = async (brandId: string, partnerId?: string) =>
  (
    await app.admin.call<{ apiId: string }>('jobs.create', {
      brandAccountId: brandId,
      ...(partnerId && { partnerId }),
      status: 'accepted',
    })
  ).apiId;
export const ofOrder = (received: Received[], orderId: string) =>
  received.filter((r) => r.payload.orderId === orderId || r.payload.jobApiId === orderId);
export const deliveriesOf = async (accountId: string) =>
  (await app.admin.query<{ items: Record<string, any>[] }>('deliveries.list', { accountId })).items;
