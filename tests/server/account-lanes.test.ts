import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DomainError } from '../../domain/errors.ts';
import { accountLanes, type Pacing } from '../../server/pipeline/lanes.ts';

const test = suite('account lanes');

/** Work that runs until the test ends it, and says when it started. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    open,
    work: async () => {
      log.push(`start ${name}`);
      await opened;
      log.push(`end ${name}`);
      return name;
    },
  };
}
const turn = () => new Promise((resolve) => setImmediate(resolve));
const noGauge = { inc() {}, dec() {} };
/** An admission that lets the request through. */
const admitted = async () => undefined;

/** Time the test moves by hand: sleeps end when it passes them. */
function handTime() {
  let now = 1000;
  let sleepers: { until: number; wake: () => void }[] = [];
  return {
    now: () => now,
    sleep: (ms: number) =>
      new Promise<void>((wake) => {
        sleepers.push({ until: now + ms, wake });
      }),
    async advance(ms: number) {
      now += ms;
      const due = sleepers.filter((s) => s.until <= now);
      sleepers = sleepers.filter((s) => s.until > now);
      for (const s of due) s.wake();
      await turn();
    },
  };
}
const pacingOf = (time: Pick<Pacing, 'now' | 'sleep'>, memoryMs = 1000): Pacing => ({
  intervalMs: () => 20,
  maxWaitMs: 50,
  memoryMs,
  ...time,
});
const realTime: Pick<Pacing, 'now' | 'sleep'> = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
/** An admission refused for the account's share. */
const pastShare = async (): Promise<never> => {
  throw new DomainError('RATE_LIMITED', 'past its share', [], 1);
};
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'served',
    (e: DomainError) => e.code,
  );

test('an account works on at most its share at once, the rest in order; another account never waits for it', async () => {
  let waiting = 0;
  const inLane = accountLanes(
    2,
    {
      inc: () => {
        waiting++;
      },
      dec: () => {
        waiting--;
      },
    },
    pacingOf(realTime),
  );
  const log: string[] = [];
  const a = ['a1', 'a2', 'a3', 'a4'].map((name) => gate(log, name));
  const b = gate(log, 'b1');
  const done = a.map((g) => inLane('A', admitted, g.work));
  const other = inLane('B', admitted, b.work);
  await turn();
  assert.equal(log, ['start a1', 'start a2', 'start b1']);
  assert.is(waiting, 2, 'a3 and a4 wait');
  b.open();
  assert.is(await other, 'b1');
  a[1]!.open();
  await turn();
  assert.equal(log.slice(3), ['end b1', 'end a2', 'start a3'], 'the first waiting goes next');
  a[0]!.open();
  a[2]!.open();
  a[3]!.open();
  assert.equal(await Promise.all(done), ['a1', 'a2', 'a3', 'a4']);
  assert.is(waiting, 0);
  assert.is(inLane.open(), 0, 'the lanes close once their requests are done, even several finishing at once');
});

test('a failure frees its place and reaches its caller alone', async () => {
  const inLane = accountLanes(1, noGauge, pacingOf(realTime));
  const failed = inLane('A', admitted, async () => {
    throw new Error('boom');
  });
  const next = inLane('A', admitted, async () => 'served');
  assert.is(
    await failed.then(
      () => 'no failure',
      (e: Error) => e.message,
    ),
    'boom',
  );
  assert.is(await next, 'served');
  assert.is(await inLane('A', admitted, async () => 'again'), 'again', 'the lane works after it emptied');
  assert.is(inLane.open(), 0);
});

test('an account within its share is never paced: its requests start at once, however many', async () => {
  const time = handTime();
  const inLane = accountLanes(10, noGauge, pacingOf(time));
  const started: number[] = [];
  await Promise.all(
    Array.from({ length: 8 }, () =>
      inLane('A', admitted, async () => {
        started.push(time.now());
      }),
    ),
  );
  assert.equal(started, Array(8).fill(1000));
  assert.is(inLane.pacingAny(), false);
  inLane.refuseWhileBehind('A');
});

test('once refused for its share, an account is paced: one start per interval, the ones too far behind refused at once; others are not', async () => {
  const time = handTime();
  let waiting = 0;
  const inLane = accountLanes(
    10,
    {
      inc: () => {
        waiting++;
      },
      dec: () => {
        waiting--;
      },
    },
    pacingOf(time),
  );
  assert.is(await codeOf(inLane('A', pastShare, async () => 'never')), 'RATE_LIMITED');
  assert.is(inLane.pacingAny(), true);
  const started: number[] = [];
  let ran = 0;
  const requests = Array.from({ length: 5 }, () =>
    codeOf(
      inLane('A', admitted, async () => {
        ran++;
        started.push(time.now());
      }),
    ),
  );
  const other = inLane('B', admitted, async () => time.now());
  await turn();
  assert.equal(started, [1000], 'the first starts at once; the next ones are booked 20 ms apart');
  assert.is(await other, 1000, 'another account does not wait');
  assert.is(waiting, 2, 'two wait for their turn');
  assert.throws(
    () => inLane.refuseWhileBehind('A'),
    (e: DomainError) => e.code === 'RATE_LIMITED',
    'the door refuses it too',
  );
  inLane.refuseWhileBehind('B');
  await time.advance(20);
  await time.advance(20);
  assert.equal(await Promise.all(requests), ['served', 'served', 'served', 'RATE_LIMITED', 'RATE_LIMITED']);
  assert.equal(started, [1000, 1020, 1040]);
  assert.is(ran, 3, 'the refused ones never ran');
  assert.is(waiting, 0);
});

test('the interval is asked at each booking, for when that request starts: the spacing may change as the share is used up', async () => {
  const time = handTime();
  let interval = 20;
  const asked: number[] = [];
  const intervalMs = (accountId: string, startsInMs: number) => {
    asked.push(startsInMs);
    return accountId === 'A' ? interval : 0;
  };
  const inLane = accountLanes(10, noGauge, { ...pacingOf(time), intervalMs });
  await codeOf(inLane('A', pastShare, async () => 'never'));
  const started: number[] = [];
  const first = inLane('A', admitted, async () => {
    started.push(time.now());
  });
  interval = 30;
  const second = inLane('A', admitted, async () => {
    started.push(time.now());
  });
  const third = inLane('A', admitted, async () => {
    started.push(time.now());
  });
  await turn();
  for (let i = 0; i < 5; i++) await time.advance(10);
  await Promise.all([first, second, third]);
  assert.equal(started, [1000, 1020, 1050]);
  assert.equal(asked, [0, 20, 50], 'asked for the moment each one starts');
});

test('waiting for its turn does not keep an account paced: within its share, it is no longer paced once its refusal is old', async () => {
  const time = handTime();
  const inLane = accountLanes(10, noGauge, pacingOf(time)); // paced for 1000 ms after a refusal
  await codeOf(inLane('A', pastShare, async () => 'never'));
  const burst = async () => {
    const started: number[] = [];
    const done = Array.from({ length: 3 }, () =>
      inLane('A', admitted, async () => {
        started.push(time.now());
      }),
    );
    await turn();
    await time.advance(20);
    await time.advance(20);
    await Promise.all(done);
    return started;
  };
  assert.equal(await burst(), [1000, 1020, 1040], 'paced');
  await time.advance(460);
  assert.equal(await burst(), [1500, 1520, 1540], 'still paced: its refusal is 500 ms old');
  await time.advance(460);
  assert.equal(await burst(), [2000, 2000, 2000], 'no longer paced, though its last burst waited');
  assert.is(inLane.pacingAny(), false);
});

test('only a refused admission paces: a 429 from the work itself (a third legacy listing) does not', async () => {
  const time = handTime();
  const inLane = accountLanes(10, noGauge, pacingOf(time));
  assert.is(
    await codeOf(
      inLane('A', admitted, async () => {
        throw new DomainError('RATE_LIMITED', 'too many listings at once', [], 1);
      }),
    ),
    'RATE_LIMITED',
  );
  assert.is(inLane.pacingAny(), false);
  const started: number[] = [];
  await Promise.all(
    Array.from({ length: 4 }, () =>
      inLane('A', admitted, async () => {
        started.push(time.now());
      }),
    ),
  );
  assert.equal(started, Array(4).fill(1000));
});

test('pacing lapses once the account is neither refused nor held back for a while, and its lane then closes', async () => {
  const time = handTime();
  const inLane = accountLanes(10, noGauge, pacingOf(time));
  await codeOf(inLane('A', pastShare, async () => 'never'));
  assert.is(inLane.open(), 1, 'a paced lane stays open while empty');
  await time.advance(1001);
  assert.is(inLane.pacingAny(), false);
  const started: number[] = [];
  await Promise.all(
    Array.from({ length: 4 }, () =>
      inLane('A', admitted, async () => {
        started.push(time.now());
      }),
    ),
  );
  assert.equal(started, Array(4).fill(2001), 'no longer paced');

  const real = accountLanes(10, noGauge, pacingOf(realTime, 30));
  await codeOf(real('A', pastShare, async () => 'never'));
  assert.is(real.open(), 1);
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.is(real.open(), 0, 'closed once its pacing lapsed');
});

test.run();
