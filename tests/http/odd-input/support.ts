import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { ADMIN_TOKEN } from '../../support/app.ts';
import { appWithMailbox, integrator } from '../../support/integrators.ts';
import { sharedDatabase } from '../../support/shared.ts';
import { snapshot } from '../../support/snapshot.ts';

// What the suites of odd input share (CONTRACT §3: input no operation can take is a 4xx, never a 5xx, and changes
// nothing; each kind is sent where it used to fail): an app with its accounts and a job, the requests and checks.
type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Who = Awaited<ReturnType<typeof integrator>>;
export let app: App;
export let brand: Who;
export let partner: Who;
export let signed: Who;
export let jobApiId: string;
export const KEY = 'odd-input-signing-key-0123';
export const ADMIN = `Bearer ${ADMIN_TOKEN}`;
export const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

/** Gives a suite the app and its accounts. */
export function withOddInputApp(test: Test) {
  test.before(async () => {
    app = await appWithMailbox();
    brand = await integrator(app, 'brand');
    partner = await integrator(app, 'partner');
    signed = await integrator(app, 'partner');
    await app.admin.call('webhookConfigs.upsert', {
      accountId: partner.accountId,
      scope: 'partner',
      url: null,
      transformer: 'partner-format',
      version: '1.3.0',
    });
    await app.admin.call('webhookConfigs.upsert', {
      accountId: signed.accountId,
      scope: 'partner',
      url: null,
      transformer: 'partner-format',
      version: '1.3.0',
      signatureKey: KEY,
    });
    jobApiId = (
      await app.admin.call<{ apiId: string }>('jobs.create', {
        brandAccountId: brand.accountId,
        partnerId: partner.accountId,
        status: 'accepted',
      })
    ).apiId;
  });
}

/** Runs the requests and asserts that no table changed meanwhile. */
export async function unchanged(work: () => Promise<void>) {
  const database = await sharedDatabase();
  const before = await snapshot(database);
  await work();
  await app.drainDeferred();
  assert.equal(await snapshot(database), before, 'nothing changed');
}

export const rawPost = (path: string, body: string, token?: string) => {
  const req = app.http.post(path).set('content-type', 'application/json');
  return (token ? req.set('authorization', `Bearer ${token}`) : req).send(body);
};

export function assertProblem(
  res: { status: number; body: Record<string, unknown>; headers: Record<string, string> },
  status: number,
  code: string,
  detail?: RegExp,
) {
  assert.is(res.status, status, JSON.stringify(res.body));
  assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
  assert.is(res.body.code, code);
  if (detail) assert.match(String(res.body.detail), detail);
}

export function assertTrpcError(res: { status: number; body: Record<string, unknown> }, status: number, code: string) {
  assert.is(res.status, status, JSON.stringify(res.body));
  const error = res.body.error as { data: { code: string; httpStatus: number } };
  assert.equal([error.data.code, error.data.httpStatus], [code, status]);
}
