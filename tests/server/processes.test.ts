import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { layoutOf } from '../../server/processes/layout.ts';
import { restartPolicy } from '../../server/processes/restarts.ts';

const test = suite('the processes of one start');
const server = 'postgres://postgres@127.0.0.1:5432/pbi';
const base = { role: 'all' as const, databaseUrl: server, webConcurrency: 4, testClock: false };

test('on PostgreSQL in the all role, WEB_CONCURRENCY API processes and one worker', () => {
  assert.equal(layoutOf(base), { kind: 'cluster', api: 4, worker: 1 });
});

test('one process: WEB_CONCURRENCY=1, the embedded database (saying why), an api or worker role, the test clock (saying why)', () => {
  assert.equal(layoutOf({ ...base, webConcurrency: 1 }), { kind: 'one', reason: null });
  assert.match(String((layoutOf({ ...base, databaseUrl: undefined }) as { reason: string }).reason), /embedded database has one connection/);
  assert.equal(layoutOf({ ...base, role: 'api', webConcurrency: null }), { kind: 'one', reason: null });
  assert.equal(layoutOf({ ...base, role: 'worker', webConcurrency: null }), { kind: 'one', reason: null });
  assert.match(String((layoutOf({ ...base, testClock: true }) as { reason: string }).reason), /TEST_CLOCK/);
});

test('WEB_CONCURRENCY: unset, the CPUs; set above 1 where one process runs, said to be ignored and why', () => {
  assert.equal(layoutOf({ ...base, webConcurrency: null }, 3), { kind: 'cluster', api: 3, worker: 1 });
  assert.equal(layoutOf({ ...base, webConcurrency: null }, 1), { kind: 'one', reason: null });
  assert.equal(layoutOf({ ...base, role: 'api', webConcurrency: null }), { kind: 'one', reason: null });
  assert.equal(layoutOf({ ...base, role: 'worker', webConcurrency: 1 }), { kind: 'one', reason: null });
  assert.equal(layoutOf({ ...base, role: 'api' }),
    { kind: 'one', reason: 'WEB_CONCURRENCY=4 is ignored: SERVICE_ROLE=api is one process\'s job (start as many as you need; SERVICE_ROLE=all starts a cluster)' });
  assert.match(String((layoutOf({ ...base, role: 'worker' }) as { reason: string }).reason), /^WEB_CONCURRENCY=4 is ignored: SERVICE_ROLE=worker/);
  assert.match(String((layoutOf({ ...base, databaseUrl: undefined }) as { reason: string }).reason), /^WEB_CONCURRENCY=4 is ignored: the embedded database/);
});

test('a dead process is restarted after 1 s, doubling with each death of its role within a minute; the fifth gives up', () => {
  const policy = restartPolicy();
  assert.equal([0, 10, 20, 30].map((at) => policy.died('api', at)), [1000, 2000, 4000, 8000]);
  assert.is(policy.died('api', 40), null);
  assert.is(policy.died('worker', 40), 1000, 'each role counts its own deaths');
});

test('deaths older than a minute no longer count', () => {
  const policy = restartPolicy();
  for (const at of [0, 1, 2, 3]) policy.died('api', at);
  assert.is(policy.died('api', 60_002), 1000 * 2 ** 1, 'the deaths at 0 and 1 ms are forgotten, those at 2 and 3 ms count');
  const slow = restartPolicy();
  assert.equal([0, 15_000, 30_000, 45_000, 61_000, 76_000].map((at) => slow.died('api', at)), [1000, 2000, 4000, 8000, 8000, 8000]);
});

test.run();
