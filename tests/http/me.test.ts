import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../support/integrators.ts';

// GET /v3/me: who a token speaks for, by name (the portal's header shows it).
const test = suite('GET /v3/me: the account and the contact of the token');
type App = Awaited<ReturnType<typeof appWithMailbox>>;
let app: App;
test.before(async () => {
  app = await appWithMailbox();
});

test("a brand and a child partner: name, role, master and the contact's e-mail; no token is 401; typed RPC alike", async () => {
  const brand = await integrator(app, 'brand');
  const res = await app.http.get('/v3/me').set('authorization', `Bearer ${brand.accessToken}`);
  assert.equal(res.body, {
    role: 'brand',
    account: { id: brand.accountId, name: 'brand account', parentId: null },
    contact: { id: brand.contactId, email: brand.email },
  });
  const master = await integrator(app, 'partner');
  const child = await integrator(app, 'partner', master.accountId);
  const childMe = await app.http.get('/v3/me').set('authorization', `Bearer ${child.accessToken}`);
  assert.equal(
    [childMe.body.role, childMe.body.account.parentId, childMe.body.contact.email],
    ['partner', master.accountId, child.email],
  );
  const typed = await app.http.get('/trpc/me.get').set('authorization', `Bearer ${child.accessToken}`);
  assert.equal(typed.body.result.data, childMe.body);
  const anonymous = await app.http.get('/v3/me');
  assert.equal([anonymous.status, anonymous.body.code], [401, 'UNAUTHORIZED']);
  const refresh = await app.http.get('/v3/me').set('authorization', `Bearer ${brand.refreshToken}`);
  assert.is(refresh.status, 401, 'a refresh token buys access tokens, nothing else');
});

test.run();
