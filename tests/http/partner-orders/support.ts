import type { Test } from 'uvu';
import { appWithMailbox, integrator } from '../../support/integrators.ts';

// What the suites of partner order polling share: a brand, a master partner with children (one with a configuration of
// its own), partners unrelated, unconfigured or default-shaped, their orders (`jobs`, by key), and the GET they send.
export type App = Awaited<ReturnType<typeof appWithMailbox>>;
export type Who = Awaited<ReturnType<typeof integrator>>;

export let app: App;
export let brand: Who,
  master: Who,
  childA: Who,
  childB: Who,
  ownChild: Who,
  unrelated: Who,
  noConfig: Who,
  orphanChild: Who,
  defaultShaped: Who;
export const jobs: Record<string, string> = {};
export const at = (minutes: number) => new Date(Date.UTC(2026, 10, 1, 12, minutes)).toISOString();

/** Gives a suite its own app, accounts and orders. */
export function withPartnerOrders(test: Test) {
  test.before(async () => {
    app = await appWithMailbox();
    brand = await integrator(app, 'brand');
    master = await integrator(app, 'partner');
    childA = await integrator(app, 'partner', master.accountId);
    childB = await integrator(app, 'partner', master.accountId);
    ownChild = await integrator(app, 'partner', master.accountId);
    unrelated = await integrator(app, 'partner');
    noConfig = await integrator(app, 'partner');
    const unconfiguredMaster = await integrator(app, 'partner');
    orphanChild = await integrator(app, 'partner', unconfiguredMaster.accountId);
    defaultShaped = await integrator(app, 'partner');
    const config = (who: Who, transformer: string, version: string) =>
      app.admin.call('webhookConfigs.upsert', { accountId: who.accountId, scope: 'partner', transformer, version });
    await config(master, 'partner-format', '1.3.0');
    await config(ownChild, 'partner-format', '1.1.0');
    await config(unrelated, 'partner-format', '1.3.0');
    await config(defaultShaped, 'default', '1.0.0');

    const job = async (key: string, partner: Who | null, minutes: number, status = 'open', apiId?: string) => {
      const created = await app.admin.call<{ apiId: string }>('jobs.create', {
        brandAccountId: brand.accountId,
        partnerId: partner?.accountId ?? null,
        status,
        updatedAt: at(minutes),
        apiId: apiId ?? `${key}-${brand.accountId.slice(0, 8)}`,
      });
      jobs[key] = created.apiId;
    };
    await job('m1', master, 10);
    await job('m2', master, 20, 'completed');
    await job('a1', childA, 30, 'appointment_confirmed');
    await job('a2', childA, 40, 'new');
    await job('b1', childB, 50, 'started');
    await job('o1', ownChild, 60);
    await job('o2', ownChild, 70, 'cancelled');
    await job('u1', unrelated, 80);
    await job('d1', defaultShaped, 90);
    await job('none', null, 100);
    // Two jobs with the same updatedAt: the tie is broken by apiId ascending.
    await job('tieZ', childB, 55, 'open', `zz-tie-${brand.accountId.slice(0, 8)}`);
    await job('tieA', childB, 55, 'open', `aa-tie-${brand.accountId.slice(0, 8)}`);
  });
}

export const get = (who: Who, path: string) => app.http.get(path).set('authorization', `Bearer ${who.accessToken}`);
export const ids = (items: { jobApiId?: string; orderId?: string }[]) => items.map((i) => i.jobApiId ?? i.orderId);
export const masterScope = () => [jobs.o2, jobs.o1, jobs.tieA, jobs.tieZ, jobs.b1, jobs.a2, jobs.a1, jobs.m2, jobs.m1];
