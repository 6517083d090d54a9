import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { onPostgres, skipUnless } from '../../support/skip.ts';
import { type App, app, partner, twin, waitForNextWindow, withFairUseApps } from './support.ts';

// The legacy listing's stream slots: at most 2 of an account stream at once, a finished one frees its slot, a dead
// holder's is taken over.
const test = suite('fair use: streams of the legacy listing');
withFairUseApps(test);

test('at most 2 legacy listings of an account stream at once: a third is 429 with Retry-After; a finished one frees its slot', async () => {
  await waitForNextWindow();
  const legacy = (on: App) => on.http.get('/v3/partner-orders').set('authorization', `Bearer ${partner.accessToken}`);
  for (let i = 0; i < 3; i++) {
    const res = await legacy(app);
    assert.is(res.status, 200, 'each listing gives its slot back when it ends');
  }
  const held = [
    await app.services.unitOfWork().statements((deps) => deps.streamSlots.take(partner.accountId)),
    await twin.services.unitOfWork().statements((deps) => deps.streamSlots.take(partner.accountId)),
  ];
  try {
    if (onPostgres) {
      // One slot held here and one by the other instance: the server's count is what counts.
      const refused = await legacy(app);
      assert.equal([refused.status, refused.body.code], [429, 'TOO_MANY_REQUESTS']);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
    } else {
      const third = await app.services.unitOfWork().statements((deps) => deps.streamSlots.take(partner.accountId));
      held.push(third);
      const refused = await legacy(app);
      assert.equal([refused.status, refused.body.code], [429, 'TOO_MANY_REQUESTS']);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
    }
    await waitForNextWindow(); // this test's requests stay within the per-second limit
    assert.is(
      (await app.http.get('/v3/partner-orders/paginated').set('authorization', `Bearer ${partner.accessToken}`)).status,
      200,
      'the paginated listing is not a stream',
    );
  } finally {
    for (const slot of held) await slot?.release();
  }
  assert.is((await legacy(app)).status, 200);
});

test('a slot whose holder died (its lease ran out) is taken over', async () => {
  if (skipUnless(onPostgres, 'needs PostgreSQL (DATABASE_URL)')) return; // in memory, slots die with their process
  await waitForNextWindow();
  const sql = app.database.orm.em.fork().getConnection();
  await sql.execute(
    `insert into stream_slots (account_id, slot, holder, lease_until) values (?, 0, gen_random_uuid(), now() - interval '1 second'),
    (?, 1, gen_random_uuid(), now() + interval '1 minute')`,
    [partner.accountId, partner.accountId],
  );
  try {
    const res = await app.http.get('/v3/partner-orders').set('authorization', `Bearer ${partner.accessToken}`);
    assert.is(res.status, 200, 'slot 0 was free to take over');
    const [row] = await sql.execute<{ n: number }[]>(
      'select count(*)::int as n from stream_slots where account_id = ?',
      [partner.accountId],
    );
    assert.is(row!.n, 1, 'the listing released the slot it took over; the live one stays');
    const another = await app.http.get('/v3/partner-orders').set('authorization', `Bearer ${partner.accessToken}`);
    assert.is(another.status, 200, 'one live slot of two: another listing streams');
  } finally {
    await sql.execute('delete from stream_slots where account_id = ?', [partner.accountId]);
  }
});

test.run();
