import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Role } from '../../domain/account.ts';
import { appRouter } from '../../server/routers/index.ts';
import type { Meta } from '../../server/trpc.ts';
import { document } from '../support/app.ts';
import { appWithMailbox, integrator } from '../support/integrators.ts';

type App = Awaited<ReturnType<typeof appWithMailbox>>;
const test = suite('role guards on every REST endpoint');

// Every REST procedure of the real router, with the roles its base procedure admits.
const endpoints = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { meta?: Meta } }>)
  .map(([name, p]) => ({ name, meta: p._def.meta }))
  .filter((e) => e.meta?.openapi)
  .map((e) => ({ name: e.name, meta: e.meta!, method: e.meta!.openapi!.method, path: e.meta!.openapi!.path.replace(/\{[^}]+\}/g, 'x'), roles: e.meta!.roles }));

let app: App;
let tokens: Record<Role, { access: string; refresh: string }>;

test.before(async () => {
  app = await appWithMailbox();
  const brand = await integrator(app, 'brand');
  const partner = await integrator(app, 'partner');
  tokens = { brand: { access: brand.accessToken, refresh: brand.refreshToken }, partner: { access: partner.accessToken, refresh: partner.refreshToken } };
});

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

test('each guarded endpoint: no token, a refresh token, or a token of another role → 401; its own roles pass the guard', async () => {
  for (const e of endpoints.filter((x) => x.roles)) {
    for (const token of [undefined, tokens.brand.refresh, tokens.partner.refresh]) {
      assert.is((await call(e, token)).status, 401, `${e.name} with ${token ? 'a refresh token' : 'no token'}`);
    }
    for (const role of ['brand', 'partner'] as const) {
      const res = await call(e, tokens[role].access);
      if (e.roles!.includes(role)) {
        assert.is.not(res.status, 401, `${e.name} refused its own role ${role}`);
        assert.ok(res.status < 500, `${e.name} failed for its own role ${role}: ${res.status}`);
      } else {
        assert.is(res.status, 401, `${e.name} admitted ${role}`);
        assert.is(res.body.code, 'UNAUTHORIZED');
        assert.is(res.body.detail, `This endpoint needs a ${e.roles!.join(' or ')} access token; this one is a ${role} token.`, e.name);
      }
    }
  }
});

test('endpoints without a guard are exactly the two login steps', () => {
  assert.equal(endpoints.filter((e) => !e.roles).map((e) => e.path).sort(), ['/v3/auth/access-token', '/v3/auth/login']);
});

test.run();
