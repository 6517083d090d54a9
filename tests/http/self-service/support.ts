import type { Test } from 'uvu';
import { appWithMailbox } from '../../support/integrators.ts';

// What the suites of integrator self-service share: the app, its worker delivering, and the admin calls and requests
// they make.
type App = Awaited<ReturnType<typeof appWithMailbox>>;
export type Json = Record<string, any>;
export let app: App;

/** Gives a suite the app, its worker started and stopped after the last test. */
export function withSelfServiceApp(test: Test) {
  test.before(async () => {
    app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '100ms', WEBHOOK_TIMEOUT_MS: '600', TEST_CLOCK: '1' });
    app.worker.start();
  });
  test.after(() => app.worker.stop());
}

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
  (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brandId, ...(partnerId && { partnerId }) }))
    .apiId;
export const setStatus = (apiId: string, status: string) => app.admin.call('jobs.setStatus', { apiId, status });
export const get = (path: string, token: string) => app.http.get(path).set('authorization', `Bearer ${token}`);
export const post = (path: string, token: string, body: object = {}) =>
  app.http.post(path).set('authorization', `Bearer ${token}`).send(body);
