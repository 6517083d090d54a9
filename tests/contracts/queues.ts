import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ClaimedCommand } from '../../domain/command.ts';
import { OutboxEvent } from '../../domain/event.ts';
import { account, at, type Run } from './samples.ts';

/**
 * One behaviour per port of the command log, the command queue, the outbox and the feed, held by the in-memory fake
 * and the MikroORM adapter alike (the delivery queue and log: deliveries.ts).
 */
export function queueContract(name: string, setup: () => Promise<Run>) {
  const test = suite(`queue contract: ${name}`);
  let run: Run;
  test.before(async () => {
    run = await setup();
  });

  test('commands: a _cid is claimed once per account; the holder is answered with its body and answer', async () => {
    const owner = account('partner');
    const other = account('partner');
    await run(async (r) => {
      await r.accounts.save(owner);
      await r.accounts.save(other);
    });
    const cid = randomUUID();
    const at0 = at('2026-01-01T00:00:00.000Z');
    const body = { _cid: cid, nested: { list: [1, 'two'] } };
    assert.is(
      await run((r) => r.commands.claim({ accountId: owner.id, cid, type: 'SetJobAppointment', body }, at0)),
      null,
    );
    await run((r) =>
      r.commands.finish(
        owner.id,
        cid,
        { status: 'succeeded', result: { _type: 'CommandResultEvent' }, answer: { status: 'succeeded', n: 1 } },
        at0,
      ),
    );
    const held = await run((r) =>
      r.commands.claim({ accountId: owner.id, cid, type: 'SetJobAppointment', body: { other: true } }, at0),
    );
    assert.equal(held, {
      accountId: owner.id,
      cid,
      type: 'SetJobAppointment',
      body,
      status: 'succeeded',
      answer: { status: 'succeeded', n: 1 },
    });
    assert.equal(await run((r) => r.commands.result(owner.id, cid)), {
      status: 'succeeded',
      result: { _type: 'CommandResultEvent' },
      finishedAt: at0,
    });
    assert.is(
      await run((r) => r.commands.claim({ accountId: other.id, cid, type: 'SetJobAppointment', body }, at0)),
      null,
      'per account',
    );
    assert.is(await run((r) => r.commands.result(randomUUID(), cid)), null);
  });

  test('command queue: accepted commands are claimed once, oldest first, and again only after their lease', async () => {
    const owner = account();
    await run((r) => r.accounts.save(owner));
    const t0 = at('2026-03-01T00:00:00.000Z');
    const later = (s: number) => new Date(t0.getTime() + s * 1000);
    const cids = [randomUUID(), randomUUID(), randomUUID()];
    for (const cid of cids) {
      const accepted = {
        accountId: owner.id,
        cid,
        type: 'RefreshOrder',
        body: { _cid: cid },
        answer: { _cid: cid, status: 'accepted' },
      };
      assert.is(await run((r) => r.commands.accept(accepted, t0)), null);
    }
    assert.equal((await run((r) => r.commands.result(owner.id, cids[0]!)))?.status, 'accepted');
    const mine = <C extends { accountId: string }>(claimed: C[]) => claimed.filter((c) => c.accountId === owner.id);
    const first = mine(await run((r) => r.commandQueue.claimDue(100, t0, later(30))));
    assert.equal(
      first.map((c) => [c.cid, c.attempts]),
      cids.map((cid) => [cid, 1]),
    );
    assert.equal(
      mine(await run((r) => r.commandQueue.claimDue(100, later(10), later(40)))),
      [],
      'held until the lease runs out',
    );

    const done = { status: 'succeeded', result: { n: 0 } } as const;
    assert.is(await run((r) => r.commandQueue.finishClaimed(first[0]!, done, later(1))), true);
    assert.equal(await run((r) => r.commands.result(owner.id, cids[0]!)), {
      status: 'succeeded',
      result: { n: 0 },
      finishedAt: later(1),
    });
    assert.is(
      await run((r) => r.commandQueue.finishClaimed(first[0]!, { status: 'failed', result: { n: 9 } }, later(2))),
      false,
      'finished',
    );
    assert.equal(
      (await run((r) => r.commands.result(owner.id, cids[0]!)))?.status,
      'succeeded',
      'a lost claim changes nothing',
    );
    await run((r) => r.commandQueue.release(first[1]!, later(20), false));

    const again = mine(await run((r) => r.commandQueue.claimDue(100, later(31), later(60))));
    assert.equal(
      again.map((c) => [c.cid, c.attempts]),
      [
        [cids[1], 1],
        [cids[2], 2],
      ],
      'a lapsed lease and a released claim are taken again (this release gave its attempt back)',
    );
    assert.is(
      await run((r) => r.commandQueue.finishClaimed(first[2]!, done, later(32))),
      false,
      'the old claim is lost',
    );
    assert.equal((await run((r) => r.commands.result(owner.id, cids[2]!)))?.status, 'accepted');
    assert.is(await run((r) => r.commandQueue.finishClaimed(again[1]!, done, later(32))), true);
    await run((r) => r.commandQueue.release(again[0]!, later(61), true));
    assert.equal(
      mine(await run((r) => r.commandQueue.claimDue(100, later(62), later(90)))).map((c) => [c.cid, c.attempts]),
      [[cids[1], 2]],
      'a release that used its attempt keeps it',
    );

    const before = await run((r) => r.commandQueue.purgeFinished(later(2), 1000));
    assert.ok(before >= 1);
    assert.is(await run((r) => r.commands.result(owner.id, cids[0]!)), null, 'purged');
    assert.equal((await run((r) => r.commands.result(owner.id, cids[1]!)))?.status, 'accepted', 'unfinished ones stay');
    assert.equal(
      await run((r) => r.commands.result(owner.id, cids[2]!)),
      { status: 'succeeded', result: { n: 0 }, finishedAt: later(32) },
      'finished after `before`: stays',
    );
    await run((r) => r.commands.finish(owner.id, cids[1]!, { status: 'failed', result: {} }, later(3)));
  });

  test('command queue: a claim whose lease ran out finishes late, after another executor took the command over: false, and nothing changes', async () => {
    const owner = account();
    await run((r) => r.accounts.save(owner));
    const t0 = at('2026-03-02T00:00:00.000Z');
    const later = (s: number) => new Date(t0.getTime() + s * 1000);
    const [finished, givenBack] = [randomUUID(), randomUUID()];
    for (const cid of [finished, givenBack]) {
      await run((r) =>
        r.commands.accept(
          {
            accountId: owner.id,
            cid,
            type: 'RefreshOrder',
            body: { _cid: cid },
            answer: { _cid: cid, status: 'accepted' },
          },
          t0,
        ),
      );
    }
    const claim = async (now: Date, leaseUntil: Date) => {
      const claimed = await run((r) => r.commandQueue.claimDue(100, now, leaseUntil));
      return (cid: string) => claimed.find((c) => c.cid === cid && c.accountId === owner.id)!;
    };
    const finish = (claimed: ClaimedCommand, by: string, s: number) =>
      run((r) => r.commandQueue.finishClaimed(claimed, { status: 'succeeded', result: { by } }, later(s)));
    const stale = await claim(t0, later(30));
    const second = await claim(later(31), later(60));
    assert.equal(
      [second(finished).attempts, second(givenBack).attempts],
      [2, 2],
      'both taken over once the first lease ran out',
    );

    // The second executor finishes first; the first one's result, arriving late, is refused and changes nothing.
    assert.is(await finish(second(finished), 'second', 32), true);
    assert.is(await finish(stale(finished), 'stale', 33), false, 'a late finish of a lost claim');
    assert.equal(await run((r) => r.commands.result(owner.id, finished)), {
      status: 'succeeded',
      result: { by: 'second' },
      finishedAt: later(32),
    });

    // The second executor gives its claim back with its attempt (the moment's failure): the command is nobody's,
    // and still not the stale claim's. The next claim runs it, once.
    await run((r) => r.commandQueue.release(second(givenBack), later(40), false));
    assert.is(
      await finish(stale(givenBack), 'stale', 34),
      false,
      'a lost claim stays lost when the command is given back',
    );
    assert.equal(await run((r) => r.commands.result(owner.id, givenBack)), { status: 'accepted' });
    const third = await claim(later(40), later(70));
    assert.is(await finish(third(givenBack), 'third', 41), true);
    assert.is(await finish(stale(givenBack), 'stale', 42), false);
    assert.equal(await run((r) => r.commands.result(owner.id, givenBack)), {
      status: 'succeeded',
      result: { by: 'third' },
      finishedAt: later(41),
    });
  });

  test('events: stored with the unit of work, read back newest first', async () => {
    const brand = account();
    const events = [1, 2, 3].map(
      (n) =>
        new OutboxEvent({
          id: randomUUID(),
          accountId: brand.id,
          scope: 'brand',
          type: 'OrderStatusEvent',
          orderId: `job-${n}`,
          payload: { n, nested: { list: [n] } },
          endpointId: n === 2 ? null : randomUUID(),
          deliver: n === 3,
          createdAt: at('2026-01-01T00:00:00.000Z'),
        }),
    );
    await run(async (r) => {
      await r.accounts.save(brand);
      await r.events.add(events.slice(0, 2));
    });
    await run((r) => r.events.add(events.slice(2)));
    const recent = await run((r) => r.events.recentFor(brand.id, 2));
    assert.equal(
      recent.map((e) => e.payload.n),
      [3, 2],
    );
    assert.equal({ ...recent[0] }, { ...events[2] });
  });

  test('event feed: committed events of an endpoint get positions in the order stored; pages after a position; endpoints apart', async () => {
    const brand = account();
    const now = at('2026-05-01T00:00:00.000Z');
    const endpoint = randomUUID();
    const other = randomUUID();
    const event = (n: number, endpointId: string | null) =>
      new OutboxEvent({
        id: randomUUID(),
        accountId: brand.id,
        scope: 'brand',
        type: 'OrderStatusEvent',
        orderId: `job-${n}`,
        payload: { _eid: `e${n}`, n },
        endpointId,
        deliver: false,
        createdAt: new Date(now.getTime() + n),
      });
    const events = [event(1, endpoint), event(2, other), event(3, null), event(4, endpoint), event(5, endpoint)];
    const entries = (id: string, after: number, limit: number) =>
      run((r) => r.eventFeed.page(id, after, limit)).then((read) => read.entries);
    await run(async (r) => {
      await r.accounts.save(brand);
      await r.events.add(events.slice(0, 3));
    });
    await run((r) => r.events.add(events.slice(3)));
    assert.equal(await entries(endpoint, 0, 10), [], 'nothing before the sequencer has run');
    while ((await run((r) => r.eventFeed.sequence(2))) > 0);
    const page = await entries(endpoint, 0, 10);
    assert.equal(
      page.map((e) => JSON.parse(e.payload)),
      [
        { _eid: 'e1', n: 1 },
        { _eid: 'e4', n: 4 },
        { _eid: 'e5', n: 5 },
      ],
    );
    assert.ok(page[0]!.position < page[1]!.position && page[1]!.position < page[2]!.position);
    assert.equal(
      page.map((e) => e.createdAt),
      [events[0]!.createdAt, events[3]!.createdAt, events[4]!.createdAt],
    );
    assert.equal(
      (await entries(endpoint, page[0]!.position, 1)).map((e) => JSON.parse(e.payload).n),
      [4],
    );
    assert.equal(
      (await entries(other, 0, 10)).map((e) => JSON.parse(e.payload).n),
      [2],
    );
    const late = event(6, endpoint);
    await run((r) => r.events.add([late]));
    while ((await run((r) => r.eventFeed.sequence(100))) > 0);
    assert.equal(
      (await entries(endpoint, page[2]!.position, 10)).map((e) => JSON.parse(e.payload).n),
      [6],
      'a later event comes after',
    );
  });

  test.run();
}
