import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FlexibleLoginRateLimiter, FlexibleRateLimiter } from '../../adapters/rate-limit.ts';
import { sharedDatabase } from '../support/shared.ts';

const test = suite('login rate limiter');

for (const store of ['memory', 'postgres'] as const) {
  const make = async () =>
    store === 'memory'
      ? FlexibleLoginRateLimiter.inMemory({ perEmail: 5, perAddress: 8 })
      : FlexibleLoginRateLimiter.inPostgres({ perEmail: 5, perAddress: 8 }, (await sharedDatabase()).orm.em.getKnex());

  test(`${store}: the 6th attempt for one e-mail within a minute is refused with a wait`, async () => {
    const limiter = await make();
    const email = `${randomUUID()}@example.com`;
    for (let i = 0; i < 5; i++) assert.is(await limiter.consume(email, `addr-${randomUUID()}`), null);
    const wait = await limiter.consume(email, `addr-${randomUUID()}`);
    assert.ok(wait !== null && wait > 0 && wait <= 60, String(wait));
    assert.is(
      await limiter.consume(`${randomUUID()}@example.com`, `addr-${randomUUID()}`),
      null,
      'other addresses are not affected',
    );
  });

  test(`${store}: one client address is limited across e-mails`, async () => {
    const limiter = await make();
    const address = `198.51.100.${Math.floor(Math.random() * 250)}-${randomUUID()}`;
    for (let i = 0; i < 8; i++) assert.is(await limiter.consume(`${randomUUID()}@example.com`, address), null);
    assert.ok((await limiter.consume(`${randomUUID()}@example.com`, address)) !== null);
  });
}

test('postgres: counters are shared between limiter instances (as between processes)', async () => {
  const knex = (await sharedDatabase()).orm.em.getKnex();
  const a = FlexibleLoginRateLimiter.inPostgres({ perEmail: 2, perAddress: 100 }, knex);
  const b = FlexibleLoginRateLimiter.inPostgres({ perEmail: 2, perAddress: 100 }, knex);
  const email = `${randomUUID()}@example.com`;
  assert.is(await a.consume(email, randomUUID()), null);
  assert.is(await b.consume(email, randomUUID()), null);
  assert.ok((await a.consume(email, randomUUID())) !== null);
});

for (const store of ['memory', 'postgres'] as const) {
  const make = async (points: number) =>
    store === 'memory'
      ? FlexibleRateLimiter.inMemory(`requests-${randomUUID()}`, points, 1)
      : FlexibleRateLimiter.inPostgres(
          `requests-${randomUUID()}`,
          points,
          1,
          (await sharedDatabase()).orm.em.getKnex(),
        );

  test(`${store}: requests per key and second; the spacing that spreads what is left of the share; the refusal remembered on a server`, async () => {
    const limiter = await make(3);
    const key = randomUUID();
    assert.is(limiter.spacingMs(key), null, 'nothing counted here yet');
    assert.is(await limiter.consume(key), null);
    const first = limiter.spacingMs(key)!;
    assert.ok(first > 0 && first <= 1000 / 3, `the rest of the window over the 2 left and 1: ${first}`);
    assert.is(await limiter.consume(key), null);
    const second = limiter.spacingMs(key)!;
    assert.ok(second > first && second <= 500, `the rest of the window over the 1 left and 1: ${second}`);
    const later = limiter.spacingMs(key, 300)!;
    assert.ok(later < second && later <= 350, `from 300 ms on, what is left of the window then: ${later}`);
    assert.is(limiter.spacingMs(key, 1000), null, 'a start after this window ends: nothing known of that one');
    assert.is(await limiter.consume(key), null);
    assert.is(limiter.spacingMs(key), null, 'none left: the rest of the window is refused as it comes');
    assert.is(limiter.spacingMs(randomUUID()), null, 'another key: unknown');
    assert.is(limiter.refusingAny(), false);
    const wait = await limiter.consume(key);
    assert.ok(wait !== null && wait >= 1, `the 4th within the second is refused: ${wait}`);
    // On a server the refusal is remembered in this process, so that the rest of the window costs no round trip.
    assert.is(limiter.peek(key) !== null, store === 'postgres');
    assert.is(limiter.refusingAny(), store === 'postgres');
    assert.is(limiter.peek(randomUUID()), null);
  });
}

test('postgres: counted by another process too, a refusal here drops what this process knew of the share', async () => {
  const knex = (await sharedDatabase()).orm.em.getKnex();
  const prefix = `requests-${randomUUID()}`;
  const [here, there] = [
    FlexibleRateLimiter.inPostgres(prefix, 3, 1, knex),
    FlexibleRateLimiter.inPostgres(prefix, 3, 1, knex),
  ];
  const key = randomUUID();
  assert.is(await here.consume(key), null);
  assert.ok(here.spacingMs(key) !== null);
  assert.is(await there.consume(key), null);
  assert.is(await there.consume(key), null);
  assert.ok((await here.consume(key)) !== null, 'the share was used up elsewhere');
  assert.is(here.spacingMs(key), null, 'its 2 left were spent elsewhere: no spacing to offer');
});

test('postgres: a large share is counted in slices of a 64th, taken ahead and handed out here; a slice past the share serves what was left in it', async () => {
  const knex = (await sharedDatabase()).orm.em.getKnex();
  const prefix = `requests-${randomUUID()}`;
  // 194 a second: slices of 3.
  const [here, there] = [
    FlexibleRateLimiter.inPostgres(prefix, 194, 1, knex),
    FlexibleRateLimiter.inPostgres(prefix, 194, 1, knex),
  ];
  const key = randomUUID();
  const stored = async () =>
    Number(
      (await knex.raw('select points from login_rate_limits where key = ?', [`${prefix}:${key}`])).rows[0]?.points ?? 0,
    );
  assert.equal(await Promise.all(Array.from({ length: 3 }, () => here.consume(key))), [null, null, null]);
  assert.is(await stored(), 3, 'three requests at once: one slice taken, not three');
  assert.is(await here.consume(key), null);
  assert.is(await stored(), 6, 'the next slice, 2 of it left here');
  for (let i = 0; i < 186; i++) assert.is(await there.consume(key), null);
  assert.is(await stored(), 192, 'counted elsewhere too');
  assert.is(await here.consume(key), null, 'what is left of the slice here is served from memory');
  assert.is(await here.consume(key), null);
  assert.is(await stored(), 192);
  assert.is(await here.consume(key), null, 'a slice past the share: its first point was within it');
  assert.ok((await here.consume(key)) !== null, 'then the share is spent');
  assert.ok((await there.consume(key)) !== null, 'everywhere');
});

test.run();
