import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { accountLanes } from '../../server/account-lanes.ts';

const test = suite('account lanes');

/** Work that runs until the test ends it, and says when it started. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => { open = resolve; });
  return { open, work: async () => { log.push(`start ${name}`); await opened; log.push(`end ${name}`); return name; } };
}
const turn = () => new Promise((resolve) => setImmediate(resolve));

test('an account works on at most its share at once, the rest in order; another account never waits for it', async () => {
  let waiting = 0;
  const inLane = accountLanes(2, { inc: () => { waiting++; }, dec: () => { waiting--; } });
  const log: string[] = [];
  const a = ['a1', 'a2', 'a3', 'a4'].map((name) => gate(log, name));
  const b = gate(log, 'b1');
  const done = a.map((g) => inLane('A', g.work));
  const other = inLane('B', b.work);
  await turn();
  assert.equal(log, ['start a1', 'start a2', 'start b1']);
  assert.is(waiting, 2, 'a3 and a4 wait');
  b.open();
  assert.is(await other, 'b1');
  a[1]!.open();
  await turn();
  assert.equal(log.slice(3), ['end b1', 'end a2', 'start a3'], 'the first waiting goes next');
  a[0]!.open(); a[2]!.open(); a[3]!.open();
  assert.equal(await Promise.all(done), ['a1', 'a2', 'a3', 'a4']);
  assert.is(waiting, 0);
  assert.is(inLane.open(), 0, 'the lanes close once their requests are done, even several finishing at once');
});

test('a failure frees its place and reaches its caller alone', async () => {
  const inLane = accountLanes(1, { inc() {}, dec() {} });
  const failed = inLane('A', async () => { throw new Error('boom'); });
  const next = inLane('A', async () => 'served');
  assert.is(await failed.then(() => 'no failure', (e: Error) => e.message), 'boom');
  assert.is(await next, 'served');
  assert.is(await inLane('A', async () => 'again'), 'again', 'the lane works after it emptied');
  assert.is(inLane.open(), 0);
});

test.run();
