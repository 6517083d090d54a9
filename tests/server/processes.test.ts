import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cgroupCpuQuota, usableCpus } from '../../server/processes/cpus.ts';
import { layoutOf } from '../../server/processes/layout.ts';
import { restartPolicy } from '../../server/processes/restarts.ts';
import { onStopSignals } from '../../server/processes/signals.ts';

const test = suite('the processes of one start');
const server = 'postgres://postgres@127.0.0.1:5432/pbi';
const base = { role: 'all' as const, databaseUrl: server, webConcurrency: 4, testClock: false };

test('on PostgreSQL in the all role, WEB_CONCURRENCY API processes and one worker', () => {
  assert.equal(layoutOf(base), { kind: 'cluster', api: 4, worker: 1 });
});

test('one process: WEB_CONCURRENCY=1, the embedded database (saying why), an api or worker role, the test clock (saying why)', () => {
  assert.equal(layoutOf({ ...base, webConcurrency: 1 }), { kind: 'one', reason: null });
  assert.match(
    String((layoutOf({ ...base, databaseUrl: undefined }) as { reason: string }).reason),
    /embedded database has one connection/,
  );
  assert.equal(layoutOf({ ...base, role: 'api', webConcurrency: null }), { kind: 'one', reason: null });
  assert.equal(layoutOf({ ...base, role: 'worker', webConcurrency: null }), { kind: 'one', reason: null });
  assert.match(String((layoutOf({ ...base, testClock: true }) as { reason: string }).reason), /TEST_CLOCK/);
});

test('WEB_CONCURRENCY: unset, the CPUs; set above 1 where one process runs, said to be ignored and why', () => {
  assert.equal(layoutOf({ ...base, webConcurrency: null }, 3), { kind: 'cluster', api: 3, worker: 1 });
  assert.equal(layoutOf({ ...base, webConcurrency: null }, 1), { kind: 'one', reason: null });
  assert.equal(layoutOf({ ...base, role: 'api', webConcurrency: null }), { kind: 'one', reason: null });
  assert.equal(layoutOf({ ...base, role: 'worker', webConcurrency: 1 }), { kind: 'one', reason: null });
  assert.equal(layoutOf({ ...base, role: 'api' }), {
    kind: 'one',
    reason:
      "WEB_CONCURRENCY=4 is ignored: SERVICE_ROLE=api is one process's job (start as many as you need; SERVICE_ROLE=all starts a cluster)",
  });
  assert.match(
    String((layoutOf({ ...base, role: 'worker' }) as { reason: string }).reason),
    /^WEB_CONCURRENCY=4 is ignored: SERVICE_ROLE=worker/,
  );
  assert.match(
    String((layoutOf({ ...base, databaseUrl: undefined }) as { reason: string }).reason),
    /^WEB_CONCURRENCY=4 is ignored: the embedded database/,
  );
});

/** A filesystem of these files only. */
const files = (entries: Record<string, string>) => (path: string) => entries[path];

test("the CPUs a start may use: the affinity mask, and below it a cgroup v2 or v1 CPU quota (a container's limit), floored, at least 1", () => {
  const v2 = (max: string, path = '/') =>
    files({ '/proc/self/cgroup': `0::${path}\n`, [`/sys/fs/cgroup${path === '/' ? '' : path}/cpu.max`]: `${max}\n` });
  assert.is(cgroupCpuQuota(v2('200000 100000')), 2);
  assert.is(cgroupCpuQuota(v2('250000 100000')), 2, 'a fraction is floored, as libuv 1.49 does');
  assert.is(cgroupCpuQuota(v2('50000 100000')), 1, 'at least one');
  assert.is(cgroupCpuQuota(v2('max 100000')), null, 'no limit');
  assert.is(cgroupCpuQuota(v2('300000 100000', '/kubepods/pod1/c1')), 3, "the group's own folder");
  // Inside a container the mount is the group itself, while /proc/self/cgroup names the host's path.
  assert.is(
    cgroupCpuQuota(files({ '/proc/self/cgroup': '0::/docker/abc\n', '/sys/fs/cgroup/cpu.max': '100000 100000' })),
    1,
  );
  const v1 = (quota: string) =>
    files({
      '/proc/self/cgroup': '12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n',
      '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': `${quota}\n`,
      '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us': '100000\n',
    });
  assert.is(cgroupCpuQuota(v1('400000')), 4);
  assert.is(cgroupCpuQuota(v1('-1')), null);
  assert.is(cgroupCpuQuota(files({})), null, 'nothing readable: no quota');
  assert.is(cgroupCpuQuota(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': 'garbage' })), null);
  assert.is(usableCpus(v2('200000 100000'), 32), 2, 'the quota below the mask');
  assert.is(usableCpus(v2('800000 100000'), 4), 4, 'the mask below the quota');
  assert.is(usableCpus(v2('max 100000'), 6), 6);
  assert.ok(usableCpus() >= 1, "this machine's own answer");
});

test('a dead process is restarted after 1 s, doubling with each death of its role within a minute; the fifth gives up', () => {
  const policy = restartPolicy();
  assert.equal(
    [0, 10, 20, 30].map((at) => policy.died('api', at)),
    [1000, 2000, 4000, 8000],
  );
  assert.is(policy.died('api', 40), null);
  assert.is(policy.died('worker', 40), 1000, 'each role counts its own deaths');
});

test('deaths older than a minute no longer count', () => {
  const policy = restartPolicy();
  for (const at of [0, 1, 2, 3]) policy.died('api', at);
  assert.is(
    policy.died('api', 60_002),
    1000 * 2 ** 1,
    'the deaths at 0 and 1 ms are forgotten, those at 2 and 3 ms count',
  );
  const slow = restartPolicy();
  assert.equal(
    [0, 15_000, 30_000, 45_000, 61_000, 76_000].map((at) => slow.died('api', at)),
    [1000, 2000, 4000, 8000, 8000, 8000],
  );
});

/**
 * The stop signals a process takes, as `onStopSignals` hears them on this clock: what it calls, in order. The handlers
 * are the only SIGTERM and SIGINT listeners meanwhile (others of this run would hear the emitted signals too), then
 * the run's own are back; nothing else runs in between, as the whole exchange is synchronous.
 */
function stopCalls(signals: [at: number, signal: 'SIGTERM' | 'SIGINT'][]): string[] {
  const names = ['SIGTERM', 'SIGINT'] as const;
  const others = names.map((name) => process.rawListeners(name) as (() => void)[]);
  for (const name of names) process.removeAllListeners(name);
  const calls: string[] = [];
  try {
    let now = 0;
    onStopSignals(
      (signal) => calls.push(`stop ${signal}`),
      () => calls.push('hurry'),
      () => now,
    );
    for (const [at, signal] of signals) {
      now = at;
      process.emit(signal, signal);
    }
  } finally {
    for (const name of names) process.removeAllListeners(name);
    names.forEach((name, i) => {
      for (const listener of others[i]!) process.on(name, listener);
    });
  }
  return calls;
}

test('stop signals: the first stops; a different one, even at once, hurries past SHUTDOWN_DELAY_MS; the same within 1 s is the same stop', () => {
  // Ctrl-C during a SIGTERM's delay (a person who will not wait): SIGINT 100 ms after SIGTERM ends the delay at once.
  assert.equal(
    stopCalls([
      [0, 'SIGTERM'],
      [100, 'SIGINT'],
    ]),
    ['stop SIGTERM', 'hurry'],
  );
  assert.equal(
    stopCalls([
      [0, 'SIGINT'],
      [5, 'SIGTERM'],
    ]),
    ['stop SIGINT', 'hurry'],
  );
  // npm start relays the signal the terminal also sent: one stop, the delay served.
  assert.equal(
    stopCalls([
      [0, 'SIGTERM'],
      [100, 'SIGTERM'],
    ]),
    ['stop SIGTERM'],
  );
  assert.equal(
    stopCalls([
      [0, 'SIGINT'],
      [999, 'SIGINT'],
      [1000, 'SIGINT'],
    ]),
    ['stop SIGINT', 'hurry'],
    'the same one a second later hurries',
  );
  assert.equal(
    stopCalls([
      [0, 'SIGTERM'],
      [100, 'SIGTERM'],
      [200, 'SIGINT'],
      [300, 'SIGINT'],
    ]),
    ['stop SIGTERM', 'hurry', 'hurry'],
  );
});

test.run();
