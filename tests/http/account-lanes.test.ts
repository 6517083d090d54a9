import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ADMIN_TOKEN } from '../support/app.ts';
import { appWithMailbox, integrator, refreshTokenFor } from '../support/integrators.ts';
import { onPostgres, skipUnless } from '../support/skip.ts';

// API_CONCURRENCY_PER_ACCOUNT: each process works on at most that many requests of one account at once; the
// account's others wait their turn and are served after, never refused for it; other accounts never wait for it.
const test = suite('account lanes over HTTP');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("a request beyond its account's lane waits for the one ahead of it; another account is served meanwhile", async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return; // a request held in the database would hold the embedded database's one connection
  const app = await appWithMailbox({ API_CONCURRENCY_PER_ACCOUNT: '1' });
  const brand = await integrator(app, 'brand');
  const other = await integrator(app, 'brand');
  const as = (token: string, path: string) => app.http.get(path).set('authorization', `Bearer ${token}`);
  const waiting = async () =>
    Number(
      /^account_lane_waiting_requests (\S+)/m.exec(
        (await app.http.get('/metrics').set('authorization', `Bearer ${ADMIN_TOKEN}`)).text,
      )?.[1],
    );

  // A colleague whose API access was withdrawn after it got its token.
  const email = `withdrawn-${randomUUID().slice(0, 8)}@example.com`;
  const { id: colleague } = await app.admin.call<{ id: string }>('contacts.create', {
    accountId: brand.accountId,
    email,
  });
  const withdrawn = (
    await app.http
      .post('/v3/auth/access-token')
      .set('authorization', `Bearer ${await refreshTokenFor(app, email)}`)
      .send({})
  ).body.access_token as string;
  await app.admin.call('contacts.setApiAccess', { contactId: colleague, apiAccess: false });
  await sleep(1100); // the setup's requests' window (1 s) is over: the first request below opens the next one
  // The first request waits in the database: another transaction has inserted its _cid and not committed yet.
  const cid = randomUUID();
  const holder = await app.database.orm.em.getKnex().transaction();
  const answered: string[] = [];
  try {
    await holder.raw(
      `insert into commands (account_id, cid, type, body, status, answer, created_at, updated_at)
      values (?, ?, 'RefreshOrder', '{}'::jsonb, 'accepted', '{}'::json, now(), now())`,
      [brand.accountId, cid],
    );
    const first = app.http
      .post('/v3/commands')
      .set('authorization', `Bearer ${brand.accessToken}`)
      .send({ _v: '1.0.0', _cid: cid, _type: 'RefreshOrder', orderId: randomUUID() })
      .then((r) => {
        answered.push('first');
        return r;
      });
    await sleep(300);
    // The account's requests counted in its current window (1 s; the whole check takes well under it).
    const counted = async () =>
      (
        await app.database.orm.em
          .fork()
          .getConnection()
          .execute<{ points: number }[]>(`select points from login_rate_limits where key = ? and expire > ?`, [
            `account-requests:${brand.accountId}`,
            Date.now(),
          ])
      )[0]?.points;
    const countedBefore = await counted();
    assert.ok(countedBefore !== undefined && countedBefore >= 1, 'the first one was counted');
    const second = as(brand.accessToken, `/v3/commands/${randomUUID()}`).then((r) => {
      answered.push('second');
      return r;
    });
    await sleep(300);
    assert.equal(answered, [], 'the second request of the account waits for the first');
    assert.is(
      await counted(),
      countedBefore,
      'the waiting one is not admitted yet: its lookups and its count run in the lane',
    );
    assert.is(await waiting(), 1);
    const meanwhile = await as(other.accessToken, `/v3/commands/${randomUUID()}`);
    assert.is(meanwhile.status, 404, 'another account is served at once');
    const withdrawnAnswer = await Promise.race([
      as(withdrawn, `/v3/commands/${randomUUID()}`).then((r) => r.status),
      sleep(2000).then(() => 'still waiting'),
    ]);
    assert.is(
      withdrawnAnswer,
      401,
      'a withdrawn contact of the account is refused at once: it never waits in (nor holds) the lane',
    );
    await holder.rollback();
    const [a, b] = await Promise.all([first, second]);
    assert.equal([a.status, b.status], [202, 404], 'both served once their turn came');
    assert.equal(answered, ['first', 'second']);
    assert.is(await waiting(), 0);
  } finally {
    if (!holder.isCompleted()) await holder.rollback();
  }
});

test.run();
