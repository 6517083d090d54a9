import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ClaimedCommand } from '../../domain/command.ts';
import type { DeliveryResult } from '../../domain/delivery.ts';
import { OutboxEvent } from '../../domain/event.ts';
import { WebhookConfig } from '../../domain/webhook-config.ts';
import { at, account, type Run, DAY, NO_HEALTH } from './samples.ts';

/**
 * One behaviour per port of the command log, the command and delivery queues, the outbox and the feed, held by the
 * in-memory fake and the MikroORM adapter alike.
 */
export function queueContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`queue contract: ${name}`);
  let run: Run;
  test.before(async () => { run = await setup(); });

  test('commands: a _cid is claimed once per account; the holder is answered with its body and answer', async () => {
    const owner = account('partner');
    const other = account('partner');
    await run(async (r) => { await r.accounts.save(owner); await r.accounts.save(other); });
    const cid = randomUUID();
    const at0 = at('2026-01-01T00:00:00.000Z');
    const body = { _cid: cid, nested: { list: [1, 'two'] } };
    assert.is(await run((r) => r.commands.claim({ accountId: owner.id, cid, type: 'SetJobAppointment', body }, at0)), null);
    await run((r) => r.commands.finish(owner.id, cid, { status: 'succeeded', result: { _type: 'CommandResultEvent' }, answer: { status: 'succeeded', n: 1 } }, at0));
    const held = await run((r) => r.commands.claim({ accountId: owner.id, cid, type: 'SetJobAppointment', body: { other: true } }, at0));
    assert.equal(held, { accountId: owner.id, cid, type: 'SetJobAppointment', body, status: 'succeeded', answer: { status: 'succeeded', n: 1 } });
    assert.equal(await run((r) => r.commands.result(owner.id, cid)), { status: 'succeeded', result: { _type: 'CommandResultEvent' }, finishedAt: at0 });
    assert.is(await run((r) => r.commands.claim({ accountId: other.id, cid, type: 'SetJobAppointment', body }, at0)), null, 'per account');
    assert.is(await run((r) => r.commands.result(randomUUID(), cid)), null);
  });

  test('command queue: accepted commands are claimed once, oldest first, and again only after their lease', async () => {
    const owner = account();
    await run((r) => r.accounts.save(owner));
    const t0 = at('2026-03-01T00:00:00.000Z');
    const later = (s: number) => new Date(t0.getTime() + s * 1000);
    const cids = [randomUUID(), randomUUID(), randomUUID()];
    for (const cid of cids) {
      const accepted = { accountId: owner.id, cid, type: 'RefreshOrder', body: { _cid: cid }, answer: { _cid: cid, status: 'accepted' } };
      assert.is(await run((r) => r.commands.accept(accepted, t0)), null);
    }
    assert.equal((await run((r) => r.commands.result(owner.id, cids[0]!)))?.status, 'accepted');
    const mine = <C extends { accountId: string }>(claimed: C[]) => claimed.filter((c) => c.accountId === owner.id);
    const first = mine(await run((r) => r.commandQueue.claimDue(100, t0, later(30))));
    assert.equal(first.map((c) => [c.cid, c.attempts]), cids.map((cid) => [cid, 1]));
    assert.equal(mine(await run((r) => r.commandQueue.claimDue(100, later(10), later(40)))), [], 'held until the lease runs out');

    const done = { status: 'succeeded', result: { n: 0 } } as const;
    assert.is(await run((r) => r.commandQueue.finishClaimed(first[0]!, done, later(1))), true);
    assert.equal(await run((r) => r.commands.result(owner.id, cids[0]!)), { status: 'succeeded', result: { n: 0 }, finishedAt: later(1) });
    assert.is(await run((r) => r.commandQueue.finishClaimed(first[0]!, { status: 'failed', result: { n: 9 } }, later(2))), false, 'finished');
    assert.equal((await run((r) => r.commands.result(owner.id, cids[0]!)))?.status, 'succeeded', 'a lost claim changes nothing');
    await run((r) => r.commandQueue.release(first[1]!, later(20), false));

    const again = mine(await run((r) => r.commandQueue.claimDue(100, later(31), later(60))));
    assert.equal(again.map((c) => [c.cid, c.attempts]), [[cids[1], 1], [cids[2], 2]], 'a lapsed lease and a released claim are taken again (this release gave its attempt back)');
    assert.is(await run((r) => r.commandQueue.finishClaimed(first[2]!, done, later(32))), false, 'the old claim is lost');
    assert.equal((await run((r) => r.commands.result(owner.id, cids[2]!)))?.status, 'accepted');
    assert.is(await run((r) => r.commandQueue.finishClaimed(again[1]!, done, later(32))), true);
    await run((r) => r.commandQueue.release(again[0]!, later(61), true));
    assert.equal(mine(await run((r) => r.commandQueue.claimDue(100, later(62), later(90)))).map((c) => [c.cid, c.attempts]), [[cids[1], 2]], 'a release that used its attempt keeps it');

    const before = (await run((r) => r.commandQueue.purgeFinished(later(2), 1000)));
    assert.ok(before >= 1);
    assert.is(await run((r) => r.commands.result(owner.id, cids[0]!)), null, 'purged');
    assert.equal((await run((r) => r.commands.result(owner.id, cids[1]!)))?.status, 'accepted', 'unfinished ones stay');
    assert.equal(await run((r) => r.commands.result(owner.id, cids[2]!)), { status: 'succeeded', result: { n: 0 }, finishedAt: later(32) }, 'finished after `before`: stays');
    await run((r) => r.commands.finish(owner.id, cids[1]!, { status: 'failed', result: {} }, later(3)));
  });

  test('command queue: a claim whose lease ran out finishes late, after another executor took the command over: false, and nothing changes', async () => {
    const owner = account();
    await run((r) => r.accounts.save(owner));
    const t0 = at('2026-03-02T00:00:00.000Z');
    const later = (s: number) => new Date(t0.getTime() + s * 1000);
    const [finished, givenBack] = [randomUUID(), randomUUID()];
    for (const cid of [finished, givenBack]) {
      await run((r) => r.commands.accept({ accountId: owner.id, cid, type: 'RefreshOrder', body: { _cid: cid }, answer: { _cid: cid, status: 'accepted' } }, t0));
    }
    const claim = async (now: Date, leaseUntil: Date) => {
      const claimed = await run((r) => r.commandQueue.claimDue(100, now, leaseUntil));
      return (cid: string) => claimed.find((c) => c.cid === cid && c.accountId === owner.id)!;
    };
    const finish = (claimed: ClaimedCommand, by: string, s: number) =>
      run((r) => r.commandQueue.finishClaimed(claimed, { status: 'succeeded', result: { by } }, later(s)));
    const stale = await claim(t0, later(30));
    const second = await claim(later(31), later(60));
    assert.equal([second(finished).attempts, second(givenBack).attempts], [2, 2], 'both taken over once the first lease ran out');

    // The second executor finishes first; the first one's result, arriving late, is refused and changes nothing.
    assert.is(await finish(second(finished), 'second', 32), true);
    assert.is(await finish(stale(finished), 'stale', 33), false, 'a late finish of a lost claim');
    assert.equal(await run((r) => r.commands.result(owner.id, finished)), { status: 'succeeded', result: { by: 'second' }, finishedAt: later(32) });

    // The second executor gives its claim back with its attempt (the moment's failure): the command is nobody's,
    // and still not the stale claim's. The next claim runs it, once.
    await run((r) => r.commandQueue.release(second(givenBack), later(40), false));
    assert.is(await finish(stale(givenBack), 'stale', 34), false, 'a lost claim stays lost when the command is given back');
    assert.equal(await run((r) => r.commands.result(owner.id, givenBack)), { status: 'accepted' });
    const third = await claim(later(40), later(70));
    assert.is(await finish(third(givenBack), 'third', 41), true);
    assert.is(await finish(stale(givenBack), 'stale', 42), false);
    assert.equal(await run((r) => r.commands.result(owner.id, givenBack)), { status: 'succeeded', result: { by: 'third' }, finishedAt: later(41) });
  });

  test('events: stored with the unit of work, read back newest first', async () => {
    const brand = account();
    const events = [1, 2, 3].map((n) => new OutboxEvent({
      id: randomUUID(), accountId: brand.id, scope: 'brand', type: 'OrderStatusEvent', orderId: `job-${n}`,
      payload: { n, nested: { list: [n] } }, endpointId: n === 2 ? null : randomUUID(), deliver: n === 3,
      createdAt: at('2026-01-01T00:00:00.000Z'),
    }));
    await run(async (r) => { await r.accounts.save(brand); await r.events.add(events.slice(0, 2)); });
    await run((r) => r.events.add(events.slice(2)));
    const recent = await run((r) => r.events.recentFor(brand.id, 2));
    assert.equal(recent.map((e) => e.payload.n), [3, 2]);
    assert.equal({ ...recent[0] }, { ...events[2] });
  });

  test('event feed: committed events of an endpoint get positions in the order stored; pages after a position; endpoints apart', async () => {
    const brand = account();
    const now = at('2026-05-01T00:00:00.000Z');
    const endpoint = randomUUID();
    const other = randomUUID();
    const event = (n: number, endpointId: string | null) => new OutboxEvent({
      id: randomUUID(), accountId: brand.id, scope: 'brand', type: 'OrderStatusEvent', orderId: `job-${n}`, payload: { _eid: `e${n}`, n },
      endpointId, deliver: false, createdAt: new Date(now.getTime() + n),
    });
    const events = [event(1, endpoint), event(2, other), event(3, null), event(4, endpoint), event(5, endpoint)];
    await run(async (r) => { await r.accounts.save(brand); await r.events.add(events.slice(0, 3)); });
    await run((r) => r.events.add(events.slice(3)));
    assert.equal(await run((r) => r.eventFeed.page(endpoint, 0, 10)), [], 'nothing before the sequencer has run');
    while ((await run((r) => r.eventFeed.sequence(2))) > 0);
    const page = await run((r) => r.eventFeed.page(endpoint, 0, 10));
    assert.equal(page.map((e) => e.payload), [{ _eid: 'e1', n: 1 }, { _eid: 'e4', n: 4 }, { _eid: 'e5', n: 5 }]);
    assert.ok(page[0]!.position < page[1]!.position && page[1]!.position < page[2]!.position);
    assert.equal(page.map((e) => e.createdAt), [events[0]!.createdAt, events[3]!.createdAt, events[4]!.createdAt]);
    assert.equal((await run((r) => r.eventFeed.page(endpoint, page[0]!.position, 1))).map((e) => e.payload.n), [4]);
    assert.equal((await run((r) => r.eventFeed.page(other, 0, 10))).map((e) => e.payload.n), [2]);
    const late = event(6, endpoint);
    await run((r) => r.events.add([late]));
    while ((await run((r) => r.eventFeed.sequence(100))) > 0);
    assert.equal((await run((r) => r.eventFeed.page(endpoint, page[2]!.position, 10))).map((e) => e.payload.n), [6], 'a later event comes after');
  });

  test('deliveries: an endpoint\'s own, paged with before; redelivered one (only by its endpoint) or all failed since a time', async () => {
    const brand = account();
    const now = at('2026-06-01T00:00:00.000Z');
    const config = new WebhookConfig({
      id: randomUUID(), accountId: brand.id, scope: 'brand', url: 'https://hooks.example.com/c', transformer: 'default', version: '1.3.0',
      signatureKey: null, enabled: true, ...NO_HEALTH, createdAt: now, updatedAt: now,
    });
    const event = (n: number) => new OutboxEvent({
      id: randomUUID(), accountId: brand.id, scope: 'brand', type: 'OrderStatusEvent', orderId: 'P', payload: { _eid: `p${n}` },
      endpointId: config.id, deliver: true, createdAt: new Date(now.getTime() + n * 1000),
    });
    const events = [event(1), event(2), event(3)];
    await run(async (r) => { await r.accounts.save(brand); await r.webhookConfigs.save(config); await r.events.add(events); });
    const mine = <T extends { eventId: string }>(list: T[]) => list.filter((d) => events.some((e) => e.id === d.eventId));
    const first = mine(await run((r) => r.deliveries.list({ endpointId: config.id, limit: 2 })));
    assert.equal(first.map((d) => d.eventId), [events[2]!.id, events[1]!.id], 'newest first');
    const rest = await run((r) => r.deliveries.list({ endpointId: config.id, limit: 10, before: { createdAt: first[1]!.createdAt, seq: first[1]!.seq } }));
    assert.equal(rest.map((d) => d.eventId), [events[0]!.id]);

    // All three fail, one after the other (one order: one at a time).
    for (let i = 0; i < 3; i++) {
      const [claimed] = mine(await run((r) => r.deliveries.claimDue(1000, new Date(now.getTime() + 10_000), new Date(now.getTime() + 70_000), randomUUID())));
      await run((r) => r.deliveries.record([{ deliveryId: claimed!.id, claimToken: claimed!.claimToken, attempt: { at: now, statusCode: 500, durationMs: 1, error: 'HTTP 500' }, exchange: null, state: { status: 'failed' } }], now, DAY));
    }
    assert.is(await run((r) => r.deliveries.redeliver(first[0]!.id, now, randomUUID())), false, 'not by another endpoint');
    const since = events[1]!.createdAt;
    assert.is(await run((r) => r.deliveries.redeliverFailed({ endpointId: config.id }, since, new Date(now.getTime() + 20_000))), 2);
    assert.is(await run((r) => r.deliveries.redeliverFailed({ endpointId: randomUUID() }, since, now)), 0);
    assert.is(await run((r) => r.deliveries.redeliverFailed({ accountId: randomUUID() }, since, now)), 0);
    const log = mine(await run((r) => r.deliveries.list({ endpointId: config.id, limit: 10 })));
    assert.equal(log.map((d) => d.status), ['pending', 'pending', 'failed']);
    const claimAt = new Date(now.getTime() + 20_000);
    const again = mine(await run((r) => r.deliveries.claimDue(1000, claimAt, new Date(claimAt.getTime() + 60_000), randomUUID())));
    assert.equal(again.map((d) => [d.eventId, d.attempts]), [[events[1]!.id, 1]], 'the earlier of the order first, its attempts continuing');
    await run((r) => r.deliveries.record([{ deliveryId: again[0]!.id, claimToken: again[0]!.claimToken, attempt: { at: claimAt, statusCode: 200, durationMs: 1, error: null }, exchange: null, state: { status: 'delivered' } }], claimAt, DAY));
    const next = mine(await run((r) => r.deliveries.claimDue(1000, claimAt, new Date(claimAt.getTime() + 60_000), randomUUID())));
    assert.equal(next.map((d) => d.eventId), [events[2]!.id]);
    await run((r) => r.deliveries.record([{ deliveryId: next[0]!.id, claimToken: next[0]!.claimToken, attempt: { at: claimAt, statusCode: 200, durationMs: 1, error: null }, exchange: null, state: { status: 'delivered' } }], claimAt, DAY));
  });

  test('deliveries: a claim carries the endpoint\'s rotated-out key and its end, as stored now', async () => {
    const brand = account();
    const now = at('2026-04-02T00:00:00.000Z');
    const previousKey = { value: 'the-old-key-0123456789', expiresAt: at('2026-04-02T01:00:00.000Z') };
    const config = new WebhookConfig({
      id: randomUUID(), accountId: brand.id, scope: 'brand', url: 'https://hooks.example.com/r', transformer: 'default', version: '1.3.0',
      signatureKey: 'the-new-key-0123456789', previousKey, enabled: true, ...NO_HEALTH, createdAt: now, updatedAt: now,
    });
    const event = new OutboxEvent({
      id: randomUUID(), accountId: brand.id, scope: 'brand', type: 'OrderStatusEvent', orderId: randomUUID(), payload: { _eid: 'r' },
      endpointId: config.id, deliver: true, createdAt: now,
    });
    await run(async (r) => { await r.accounts.save(brand); await r.webhookConfigs.save(config); await r.events.add([event]); });
    const claimed = (await run((r) => r.deliveries.claimDue(1000, now, new Date(now.getTime() + 60_000), randomUUID()))).filter((d) => d.eventId === event.id);
    assert.equal(claimed.map((d) => d.endpoint), [{ url: 'https://hooks.example.com/r', signatureKey: 'the-new-key-0123456789', previousKey, enabled: true }]);
    await run((r) => r.deliveries.record([{ deliveryId: claimed[0]!.id, claimToken: claimed[0]!.claimToken, attempt: { at: now, statusCode: 200, durationMs: 1, error: null }, exchange: null, state: { status: 'delivered' } }], now, DAY));
  });

  test('deliveries: made for events to be delivered; claimed due, oldest first, one order at a time per endpoint', async () => {
    const brand = account();
    const now = at('2026-04-01T00:00:00.000Z');
    const later = (ms: number) => new Date(now.getTime() + ms);
    const config = new WebhookConfig({
      id: randomUUID(), accountId: brand.id, scope: 'brand', url: 'https://hooks.example.com/b', transformer: 'default', version: '1.3.0',
      signatureKey: 'k-0123456789abcdef', enabled: true, ...NO_HEALTH, createdAt: now, updatedAt: now,
    });
    const event = (orderId: string | null, deliver = true) => new OutboxEvent({
      id: randomUUID(), accountId: brand.id, scope: 'brand', type: 'OrderStatusEvent', orderId, payload: { _eid: 'x', orderId },
      endpointId: config.id, deliver, createdAt: now,
    });
    const [x1, x2, y1, none, x3] = [event('X'), event('X'), event('Y'), event('Z', false), event('X')];
    await run(async (r) => { await r.accounts.save(brand); await r.webhookConfigs.save(config); await r.events.add([x1!, x2!, y1!, none!]); });
    await run((r) => r.events.add([x3!]));
    const mine = <T extends { eventId: string }>(list: T[]) => list.filter((d) => [x1, x2, y1, none, x3].some((e) => e!.id === d.eventId));

    const claim = (at: Date, until: Date, token = randomUUID()) => run((r) => r.deliveries.claimDue(1000, at, until, token)).then(mine);
    const outcome = (d: { id: string; claimToken: string }, at: Date, statusCode: number | null, state: DeliveryResult['state']): DeliveryResult =>
      ({ deliveryId: d.id, claimToken: d.claimToken, attempt: { at, statusCode, durationMs: 3, error: statusCode === 200 ? null : 'failed' }, exchange: null, state });

    let first = await claim(now, later(60_000));
    assert.equal(first.map((d) => d.eventId), [x1!.id, y1!.id], 'one per order, in order; none for an event not to be delivered');
    assert.equal(first[0]!.endpoint, { url: 'https://hooks.example.com/b', signatureKey: 'k-0123456789abcdef', previousKey: null, enabled: true });
    assert.equal([first[0]!.leaseUntil, typeof first[0]!.claimToken], [later(60_000), 'string']);
    assert.equal(JSON.parse(first[0]!.body), x1!.payload);
    assert.equal(await claim(now, later(60_000)), [], 'claimed ones are held');
    await run((r) => r.deliveries.release([{ id: first[1]!.id, claimToken: randomUUID() }]));
    assert.equal(await claim(now, later(60_000)), [], 'a release with another claim\'s token changes nothing');
    await run((r) => r.deliveries.release([first[1]!]));
    const reclaimed = await claim(now, later(60_000));
    assert.equal(reclaimed.map((d) => d.eventId), [y1!.id], 'a released claim is due again at once');
    first = [first[0]!, reclaimed[0]!];

    // X1's lease runs out mid-send and another sender claims it over: the first sender's outcome is only logged.
    const over = await claim(later(60_001), later(120_000));
    assert.equal(over.map((d) => d.eventId), [x1!.id, y1!.id], 'expired leases are claimed over');
    await run((r) => r.deliveries.record([outcome(first[0]!, later(60_002), 200, { status: 'delivered' })], later(60_002), DAY));
    assert.equal(await claim(later(60_003), later(120_000)), [], 'a stale claim\'s success does not release X2');
    assert.is(await run((r) => r.deliveries.redeliver(over[0]!.id, later(60_004))), true);
    assert.equal(await claim(later(60_005), later(120_000)), [], 'a delivery being sent is not redelivered under its sender');

    const failedAt = later(60_010);
    await run((r) => r.deliveries.record([
      outcome(over[0]!, failedAt, 500, { status: 'pending', nextAttemptAt: later(65_000) }),
      outcome(over[1]!, failedAt, 200, { status: 'delivered' }),
    ], failedAt, DAY));
    assert.equal(await claim(later(60_100), later(120_000)), [], 'X2 waits while X1 waits for its retry');
    assert.is(await run((r) => r.deliveries.redeliver(over[0]!.id, later(60_200))), true);
    const early = await claim(later(60_200), later(120_000));
    assert.equal(early.map((d) => [d.eventId, d.attempts]), [[x1!.id, 1]], 'redelivering one that waits for its retry sends it now');
    await run((r) => r.deliveries.release(early));
    const retried = await claim(later(65_000), later(125_000));
    assert.equal(retried.map((d) => [d.eventId, d.attempts]), [[x1!.id, 1]], 'the stale outcome did not count as an attempt');
    await run((r) => r.deliveries.record([outcome(retried[0]!, later(65_001), null, { status: 'failed' })], later(65_001), DAY));
    const released = await claim(later(65_002), later(125_000));
    assert.equal(released.map((d) => d.eventId), [x2!.id], 'a failed delivery releases the next of its order');
    await run((r) => r.deliveries.record([outcome(released[0]!, later(65_003), 200, { status: 'delivered' })], later(65_003), DAY));

    const log = await run((r) => r.deliveries.list({ accountId: brand.id, limit: 10 }));
    const x1Log = log.find((d) => d.eventId === x1!.id)!;
    assert.equal([x1Log.status, x1Log.attempts.map((a) => a.statusCode), x1Log.nextAttemptAt, x1Log.url], ['failed', [200, 500, null], null, 'https://hooks.example.com/b']);
    assert.equal((await run((r) => r.deliveries.list({ accountId: brand.id, status: 'delivered', limit: 10 }))).map((d) => d.eventId), [y1!.id, x2!.id]);
    assert.is(await run((r) => r.deliveries.redeliver(x1Log.id, later(66_000))), true);
    assert.is(await run((r) => r.deliveries.redeliver(randomUUID(), later(66_000))), false);
    const again = (await run((r) => r.deliveries.list({ accountId: brand.id, limit: 10 }))).find((d) => d.id === x1Log.id)!;
    assert.equal([again.status, again.attempts.length, again.nextAttemptAt], ['pending', 3, later(66_000)]);

    // Retention: finished deliveries of old events go with their events; a pending one and its event stay.
    const purged = await run((r) => r.deliveries.purgeBefore(later(1), 1000));
    assert.ok(purged >= 2, 'the finished ones are purged');
    const left = mine(await run((r) => r.deliveries.list({ accountId: brand.id, limit: 10 })));
    assert.equal(left.map((d) => [d.eventId, d.status]), [[x3!.id, 'pending'], [x1!.id, 'pending']], 'pending deliveries are kept');
    // Leave nothing pending for the workers of later suites on a shared database.
    for (const step of [1, 2]) {
      const pending = await claim(later(66_000 + step), later(126_000));
      await run((r) => r.deliveries.record(pending.map((d) => outcome(d, later(66_000 + step), null, { status: 'failed' })), later(66_000 + step), DAY));
    }
    assert.equal(mine(await run((r) => r.deliveries.list({ accountId: brand.id, status: 'pending', limit: 10 }))), []);
  });


  test.run();
}
