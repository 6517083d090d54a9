import { randomUUID } from 'node:crypto';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../../support/integrators.ts';

// What the suites of brand commands over REST share: an app whose worker runs the commands, two brands and a partner,
// the orders they act on (named by `order`, fresh for each suite), and the requests that send and poll.
export type App = Awaited<ReturnType<typeof appWithMailbox>>;
export type Who = Awaited<ReturnType<typeof integrator>>;

export let app: App;
export let brand: Who, otherBrand: Who, partner: Who;
export let tag = randomUUID().slice(0, 8);
export const order = (name: string) => `${name}-${tag}`;

/** Gives a suite the app, its worker running, and its own accounts and orders. */
export function withBrandCommandsApp(test: Test) {
  test.before(async () => {
    tag = randomUUID().slice(0, 8);
    app = await appWithMailbox();
    app.worker.start();
    brand = await integrator(app, 'brand');
    otherBrand = await integrator(app, 'brand');
    partner = await integrator(app, 'partner');
    await app.admin.call('webhookConfigs.upsert', {
      accountId: brand.accountId,
      scope: 'brand',
      transformer: 'default',
      version: '1.1.0',
    });
    await app.admin.call('webhookConfigs.upsert', {
      accountId: partner.accountId,
      scope: 'partner',
      transformer: 'partner-format',
      version: '1.3.0',
    });
    for (const name of ['refresh', 'customer', 'ids', 'cancel', 'pending', 'closed', 'race', 'replay', 'rpc', 'duel']) {
      await app.admin.call('jobs.create', {
        brandAccountId: brand.accountId,
        partnerId: partner.accountId,
        apiId: order(name),
        status: 'accepted',
      });
    }
    await app.admin.call('jobs.setStatus', { apiId: order('closed'), status: 'closed' });
    await app.admin.call('jobs.create', { brandAccountId: otherBrand.accountId, apiId: order('theirs') });
  });
  test.after(() => app.worker.stop());
}

export const command = (type: string, fields: Record<string, unknown>, cid: string = randomUUID()) => ({
  _v: '1.0.0',
  _cid: cid,
  _type: type,
  ...fields,
});
export const send = (who: Who, body: unknown) =>
  app.http
    .post('/v3/commands')
    .set('authorization', `Bearer ${who.accessToken}`)
    .send(body as object);
export const poll = (who: Who, cid: string) =>
  app.http.get(`/v3/commands/${encodeURIComponent(cid)}`).set('authorization', `Bearer ${who.accessToken}`);
/** The result event once the command has run (204 until then). */
export async function outcome(who: Who, cid: string, timeoutMs = 10_000): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await poll(who, cid);
    if (res.status === 200) return res.body;
    assert.is(res.status, 204, JSON.stringify(res.body));
    assert.is(res.text, '');
    if (Date.now() > deadline) throw new Error(`no result for ${cid} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
export async function run(who: Who, body: Record<string, unknown>) {
  const res = await send(who, body);
  assert.is(res.status, 202, JSON.stringify(res.body));
  assert.equal(res.body, { _cid: body._cid, _type: body._type, status: 'accepted' });
  return outcome(who, body._cid as string);
}
export const eventsOf = (accountId: string, orderId: string | null = null) =>
  app.services
    .unitOfWork()
    .statements(async (d) =>
      (await d.events.recentFor(accountId, 1000)).filter((e) => orderId === null || e.orderId === orderId),
    );
export const pollOrder = (who: Who, orderId: string) =>
  app.http.get(`/v3/poll/job/*/${orderId}`).set('authorization', `Bearer ${who.accessToken}`);
