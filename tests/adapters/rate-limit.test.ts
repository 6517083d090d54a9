import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FlexibleLoginRateLimiter } from '../../adapters/rate-limit.ts';
import { sharedDatabase } from '../support/shared.ts';

const test = suite('login rate limiter');

for (const store of ['memory', 'postgres'] as const) {
  const make = async () => store === 'memory'
    ? FlexibleLoginRateLimiter.inMemory({ perEmail: 5, perAddress: 8 })
    : FlexibleLoginRateLimiter.inPostgres({ perEmail: 5, perAddress: 8 }, (await sharedDatabase()).orm.em.getKnex());

  test(`${store}: the 6th attempt for one e-mail within a minute is refused with a wait`, async () => {
    const limiter = await make();
    const email = `${randomUUID()}@example.com`;
    for (let i = 0; i < 5; i++) assert.is(await limiter.consume(email, `addr-${randomUUID()}`), null);
    const wait = await limiter.consume(email, `addr-${randomUUID()}`);
    assert.ok(wait !== null && wait > 0 && wait <= 60, String(wait));
    assert.is(await limiter.consume(`${randomUUID()}@example.com`, `addr-${randomUUID()}`), null, 'other addresses are not affected');
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

test.run();
