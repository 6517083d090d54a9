import { createHmac, randomUUID } from 'node:crypto';
import type { Test } from 'uvu';
import { appWithMailbox, integrator } from '../../support/integrators.ts';

// What the suites of partner commands over REST share: an app, a brand, a master partner with two children, two
// partners of their own, the jobs they act on (fresh for each suite), and the requests that sign and send.
type App = Awaited<ReturnType<typeof appWithMailbox>>;
type Who = Awaited<ReturnType<typeof integrator>>;

const KEY = 'master-signing-key-0123456789';
export const APPOINTMENT = '/v3/commands/partner/appointment';
export const YOUR_ORDER_ID = '/v3/commands/partner/your-order-id';
export let app: App;
export let brand: Who, master: Who, child: Who, sibling: Who, loner: Who, stranger: Who;
export const job: Record<string, { apiId: string; name: string }> = {};
// A tag of its own for each suite: the jobs' ids, names and references are unique in the shared database.
export let tag = randomUUID().slice(0, 8);

/** Gives a suite the app, its accounts and their jobs. */
export function withPartnerCommandsApp(test: Test) {
  test.before(async () => {
    tag = randomUUID().slice(0, 8);
    app = await appWithMailbox();
    brand = await integrator(app, 'brand');
    master = await integrator(app, 'partner');
    child = await integrator(app, 'partner', master.accountId);
    sibling = await integrator(app, 'partner', master.accountId);
    loner = await integrator(app, 'partner');
    stranger = await integrator(app, 'partner');
    await app.admin.call('webhookConfigs.upsert', {
      accountId: master.accountId,
      scope: 'partner',
      transformer: 'partner-format',
      version: '1.3.0',
      signatureKey: KEY,
    });
    await app.admin.call('webhookConfigs.upsert', {
      accountId: loner.accountId,
      scope: 'partner',
      transformer: 'partner-format',
      version: '1.1.0',
    });
    await app.admin.call('webhookConfigs.upsert', {
      accountId: brand.accountId,
      scope: 'brand',
      transformer: 'default',
      version: '1.1.0',
    });
    const make = async (key: string, partner: Who, extra: Record<string, unknown> = {}) => {
      const created = await app.admin.call<{ apiId: string; name: string }>('jobs.create', {
        brandAccountId: brand.accountId,
        partnerId: partner.accountId,
        apiId: `${key}-${tag}`,
        status: 'accepted',
        ...extra,
      });
      job[key] = created;
    };
    await make('child1', child, { invoicingEid: `INV-${tag}`, extPartnerId: `P-${tag}` });
    await make('loner1', loner, { name: `O-SHARED-${tag}` });
    await make('child2', child, { name: `O-SHARED-${tag}` });
    await make('loner2', loner, { invoicingEid: `INV-TWICE-${tag}` });
    await make('loner3', loner, { invoicingEid: `INV-TWICE-${tag}` });
    await make('sibling1', sibling, { name: `O-SIB-${tag}` });
    await make('master1', master, { name: `O-MASTER-${tag}` });
  });
}

export const sign = (raw: string, key = KEY) => createHmac('sha256', key).update(raw).digest('hex');
export const appointment = (identifier: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  _v: '1.0.0',
  _cid: randomUUID(),
  _type: 'SetJobAppointment',
  ...identifier,
  appointmentStart: '2026-12-01T09:00:00+01:00',
  appointmentEnd: '2026-12-01T11:00:00+01:00',
  ...extra,
});
/** Sends exactly these bytes, signed (or with the signature given, or none). */
export function post(who: Who, path: string, body: unknown, signature: string | null | 'sign' = 'sign') {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const req = app.http
    .post(path)
    .set('authorization', `Bearer ${who.accessToken}`)
    .set('content-type', 'application/json');
  if (signature === 'sign') req.set('x-webhook-signature', sign(raw));
  else if (signature !== null) req.set('x-webhook-signature', signature);
  return req.send(raw);
}
export const eventsFor = (accountId: string, orderId: string) =>
  app.services
    .unitOfWork()
    .transaction(async (d) => (await d.events.recentFor(accountId, 500)).filter((e) => e.orderId === orderId));
