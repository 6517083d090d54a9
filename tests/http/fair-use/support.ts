import type { Test } from 'uvu';
import { ADMIN_TOKEN } from '../../support/app.ts';
import { appWithMailbox, integrator } from '../../support/integrators.ts';

// What the fair-use suites share: two app instances with a small share per account (on PostgreSQL two processes' worth,
// sharing the counters), a partner and a brand, the listing they call, the door's metrics and the wait for a new
// second.
export type App = Awaited<ReturnType<typeof appWithMailbox>>;
export let app: App;
export let twin: App;
export let partner: Awaited<ReturnType<typeof integrator>>;
export let brand: Awaited<ReturnType<typeof integrator>>;
export const LIMIT = 5;

/** Gives a suite its own two instances and accounts. */
export function withFairUseApps(test: Test) {
  test.before(async () => {
    app = await appWithMailbox({ API_RATE_LIMIT_PER_ACCOUNT: String(LIMIT) });
    twin = await appWithMailbox({ API_RATE_LIMIT_PER_ACCOUNT: String(LIMIT) });
    partner = await integrator(app, 'partner');
    brand = await integrator(app, 'brand');
    await app.admin.call('webhookConfigs.upsert', {
      accountId: partner.accountId,
      scope: 'partner',
      url: null,
      transformer: 'partner-format',
      version: '1.3.0',
    });
  });
}

/**
 * A partner of its own: an account refused for its share is paced for a few seconds after (server/pipeline/lanes.ts),
 * so a test of the window's own count starts from an account never refused.
 */
export async function freshPartner() {
  const fresh = await integrator(app, 'partner');
  await app.admin.call('webhookConfigs.upsert', {
    accountId: fresh.accountId,
    scope: 'partner',
    url: null,
    transformer: 'partner-format',
    version: '1.3.0',
  });
  return fresh;
}
export const listing = (on: App, token: string) =>
  on.http.get('/v3/partner-orders/paginated').set('authorization', `Bearer ${token}`);
/** 429s answered by the fair-use door, before the request path (metric route "fair use"). */
export const answeredAtTheDoor = (on: App) =>
  on.http
    .get('/metrics')
    .set('authorization', `Bearer ${ADMIN_TOKEN}`)
    .then((r) =>
      Number(/http_requests_total\{method="GET",route="fair use",status="429"\} (\d+)/.exec(r.text)?.[1] ?? 0),
    );
export const waitForNextWindow = () => new Promise((resolve) => setTimeout(resolve, 1100));
