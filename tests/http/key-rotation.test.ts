import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator } from '../support/integrators.ts';

// Rotating JWT_SECRET without downtime: the old key moves to JWT_SECRET_PREVIOUS, where it verifies, never signs.
const test = suite('JWT key rotation with JWT_SECRET_PREVIOUS');
const OLD = 'the-old-jwt-secret-0123456789-0123456789';
const NEW = 'the-new-jwt-secret-9876543210-9876543210';

test('tokens of the previous key work until the setting is removed; new tokens are signed with the new key', async () => {
  const before = await appWithMailbox({ JWT_SECRET: OLD });
  const brand = await integrator(before, 'brand');
  await before.admin.call('webhookConfigs.upsert', {
    accountId: brand.accountId,
    scope: 'brand',
    url: null,
    transformer: 'default',
    version: '1.3.0',
  });
  const during = await appWithMailbox({ JWT_SECRET: NEW, JWT_SECRET_PREVIOUS: OLD });
  const after = await appWithMailbox({ JWT_SECRET: NEW });
  const config = (app: typeof before, token: string) =>
    app.http.get('/v3/webhook-config').set('authorization', `Bearer ${token}`);

  assert.is((await config(before, brand.accessToken)).status, 200);
  assert.is((await config(during, brand.accessToken)).status, 200, 'an access token of the old key still works');
  const minted = await during.http
    .post('/v3/auth/access-token')
    .set('authorization', `Bearer ${brand.refreshToken}`)
    .send({});
  assert.is(minted.status, 200, 'a refresh token of the old key still buys access tokens');
  const fresh = minted.body.access_token as string;
  assert.is((await config(after, fresh)).status, 200, 'what is minted during the rotation is signed with the new key');
  assert.is((await config(before, fresh)).status, 401, 'and not with the old one');

  const refused = await config(after, brand.accessToken);
  assert.is(refused.status, 401, "without JWT_SECRET_PREVIOUS the old key's tokens are refused");
  assert.is(refused.body.code, 'UNAUTHORIZED');
});

test.run();
