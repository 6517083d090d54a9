import type { Test } from 'uvu';
import { listening } from '../../support/app.ts';
import { appWithMailbox } from '../../support/integrators.ts';

// What the suites of the integrator guide share: the app served on a port, as the files of examples/ reach it, its
// worker delivering, and the jobs they read.
type App = Awaited<ReturnType<typeof appWithMailbox>>;
export let app: App;
export let baseUrl: string;

/** Gives a suite the app, served, its worker started and stopped after the last test. */
export function withGuideApp(test: Test) {
  test.before(async () => {
    app = await appWithMailbox({ WEBHOOK_RETRY_SCHEDULE: '100ms' });
    app.worker.start();
    baseUrl = await listening(app);
  });
  test.after(() => app.worker.stop());
}

export const createJob = async (brandId: string) =>
  (await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brandId })).apiId;
