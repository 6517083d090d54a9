import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { appWithMailbox, integrator, refreshTokenFor } from '../support/integrators.ts';

const test = suite("command results are kept 24 hours on the service's clock");

test('after 24 h the result is 404 at once, and the purge removes it within 5 s', async () => {
  const app = await appWithMailbox({ TEST_CLOCK: '1' });
  app.worker.start();
  try {
    const brand = await integrator(app, 'brand');
    const { apiId } = await app.admin.call<{ apiId: string }>('jobs.create', { brandAccountId: brand.accountId });
    const cid = randomUUID();
    const sent = await app.http
      .post('/v3/commands')
      .set('authorization', `Bearer ${brand.accessToken}`)
      .send({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: apiId });
    assert.is(sent.status, 202);
    const poll = (token: string) => app.http.get(`/v3/commands/${cid}`).set('authorization', `Bearer ${token}`);
    const deadline = Date.now() + 10_000;
    while ((await poll(brand.accessToken)).status !== 200) {
      assert.ok(Date.now() < deadline, 'the command never ran');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const stored = () =>
      app.database.orm.em
        .fork()
        .getConnection()
        .execute<{ n: number }[]>('select count(*)::int as n from commands where account_id = ? and cid = ?', [
          brand.accountId,
          cid,
        ])
        .then((r) => r[0]!.n);

    await app.admin.call('testClock.advance', { seconds: 24 * 3600 - 60 });
    const fresh = async () => {
      const refresh = await refreshTokenFor(app, brand.email);
      return (await app.http.post('/v3/auth/access-token').set('authorization', `Bearer ${refresh}`).send({})).body
        .access_token as string;
    };
    let token = await fresh();
    assert.is((await poll(token)).status, 200, 'still there a minute before the mark');
    assert.is(await stored(), 1);

    await app.admin.call('testClock.advance', { seconds: 60 });
    token = await fresh();
    assert.is((await poll(token)).status, 404, 'gone at the mark');
    const purgeDeadline = Date.now() + 5000;
    while ((await stored()) > 0) {
      assert.ok(Date.now() < purgeDeadline, 'the purge did not remove the result within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await app.worker.stop();
  }
});

test.run();
