import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Role } from '../../domain/account.ts';
import { routeTable } from '../../server/routers/contracts.ts';
import { document } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';

type App = Awaited<ReturnType<typeof appWithMailbox>>;
const test = suite('role guards on every REST endpoint');

// Every REST route, with the roles its guard admits (tests/server/route-table.test.ts holds the routes to the guards).
const endpoints = Object.entries(routeTable)
  .filter(([, { meta }]) => meta.openapi)
  .map(([name, { meta }]) => ({
    name,
    meta,
    method: meta.openapi!.method,
    path: meta.openapi!.path.replace(/\{[^}]+\}/g, 'x'),
    roles: meta.roles,
  }));

let app: App;
let tokens: Record<Role, { access: string; refresh: string }>;

test.before(async () => {
  app = await appWithMailbox();
  const brand = await integrator(app, 'brand');
  const partner = await integrator(app, 'partner');
  tokens = {
    brand: { access: brand.accessToken, refresh: brand.refreshToken },
    partner: { access: partner.accessToken, refresh: partner.refreshToken },
  };
  // Each with a configuration of its own (no URL, no key), so that its own role gets past every check that is not the
  // guard's.
  await app.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    transformer: 'default',
    version: '1.3.0',
  });
  await app.admin.call('webhookConfigs.upsert', {
    accountId: partner.accountId,
    scope: 'partner',
    transformer: 'partner-format',
    version: '1.3.0',
  });
});

/**
 * What each guarded endpoint answers its own role for the bare call below (path parameters `x`, body `{}`): the exact
 * status and problem code, so that a guard that lets the role through but then fails it (403, 404, 500 …) is seen.
 */
const OWN_ROLE_ANSWERS: Record<string, Partial<Record<Role, [number, string | null]>>> = {
  'commands.send': { brand: [400, 'BAD_REQUEST'] },
  'commands.result': { brand: [404, 'NOT_FOUND'], partner: [404, 'NOT_FOUND'] },
  'events.feed': { brand: [200, null], partner: [200, null] },
  'partnerOrders.paginated': { partner: [200, null] },
  'partnerOrders.legacy': { partner: [200, null] },
  'partnerOrders.poll': { brand: [400, 'BAD_REQUEST'], partner: [400, 'BAD_REQUEST'] },
  'partnerCommands.setJobAppointment': { partner: [400, 'BAD_REQUEST'] },
  'partnerCommands.setJobYourOrderId': { partner: [400, 'BAD_REQUEST'] },
  'webhookConfig.get': { brand: [200, null], partner: [200, null] },
  'webhookConfig.put': { brand: [400, 'BAD_REQUEST'], partner: [400, 'BAD_REQUEST'] },
  'webhookConfig.test': { brand: [404, 'NOT_FOUND'], partner: [404, 'NOT_FOUND'] },
  // A bare {} makes a key for you (CONTRACT §11).
  'webhookConfig.rotateKey': { brand: [200, null], partner: [200, null] },
  'webhookDeliveries.list': { brand: [200, null], partner: [200, null] },
  'webhookDeliveries.stats': { brand: [200, null], partner: [200, null] },
  'me.get': { brand: [200, null], partner: [200, null] },
  // The path's own placeholder names no delivery: 404, as any id of another shape (CONTRACT §3).
  'webhookDeliveries.get': { brand: [404, 'NOT_FOUND'], partner: [404, 'NOT_FOUND'] },
  'webhookDeliveries.redeliver': { brand: [404, 'NOT_FOUND'], partner: [404, 'NOT_FOUND'] },
  'webhookDeliveries.redeliverFailed': { brand: [400, 'BAD_REQUEST'], partner: [400, 'BAD_REQUEST'] },
};

const call = (e: (typeof endpoints)[number], token?: string) => {
  const req = app.http[e.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete'](e.path);
  if (token) req.set('authorization', `Bearer ${token}`);
  return e.method === 'GET' || e.method === 'DELETE' ? req : req.send({});
};

test('there are guarded endpoints; the document asks an access token of each, a refresh token of access-token, none of login', () => {
  assert.ok(endpoints.filter((e) => e.roles).length >= 2, JSON.stringify(endpoints));
  const paths = document().paths as Record<string, Record<string, { security: unknown }>>;
  const securityOf = (e: (typeof endpoints)[number]) => paths[e.meta.openapi!.path]![e.method.toLowerCase()]!.security;
  for (const e of endpoints.filter((x) => x.roles)) assert.equal(securityOf(e), [{ accessToken: [] }], e.name);
  assert.equal(securityOf(endpoints.find((e) => e.path === '/v3/auth/login')!), []);
  assert.equal(securityOf(endpoints.find((e) => e.path === '/v3/auth/access-token')!), [{ refreshToken: [] }]);
});

test('each guarded endpoint: no token, a refresh token, or a token of another role → 401; its own roles get exactly their expected answer', async () => {
  for (const e of endpoints.filter((x) => x.roles)) {
    for (const token of [undefined, tokens.brand.refresh, tokens.partner.refresh]) {
      assert.is((await call(e, token)).status, 401, `${e.name} with ${token ? 'a refresh token' : 'no token'}`);
    }
    for (const role of ['brand', 'partner'] as const) {
      const res = await call(e, tokens[role].access);
      if (e.roles!.includes(role)) {
        const [status, code] = OWN_ROLE_ANSWERS[e.name]![role]!;
        assert.equal(
          [res.status, res.body?.code ?? null],
          [status, code],
          `${e.name} for its own role ${role}: ${JSON.stringify(res.body)}`,
        );
      } else {
        assert.is(res.status, 401, `${e.name} admitted ${role}`);
        assert.is(res.body.code, 'UNAUTHORIZED');
        assert.is(
          res.body.detail,
          `This endpoint needs a ${e.roles!.join(' or ')} access token; this one is a ${role} token.`,
          e.name,
        );
      }
    }
  }
});

test('the table of own-role answers names exactly the guarded endpoints and their roles', () => {
  const guarded = Object.fromEntries(endpoints.filter((e) => e.roles).map((e) => [e.name, [...e.roles!].sort()]));
  const table = Object.fromEntries(
    Object.entries(OWN_ROLE_ANSWERS).map(([name, answers]) => [name, Object.keys(answers).sort()]),
  );
  assert.equal(table, guarded);
  for (const answers of Object.values(OWN_ROLE_ANSWERS))
    for (const [status] of Object.values(answers)) assert.ok(status < 500);
});

test('endpoints without a guard are exactly the two login steps', () => {
  assert.equal(
    endpoints
      .filter((e) => !e.roles)
      .map((e) => e.path)
      .sort(),
    ['/v3/auth/access-token', '/v3/auth/login'],
  );
});

test.run();
