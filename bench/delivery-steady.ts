// bench:delivery's steady load: events written one per transaction at a fixed rate (open loop) to a worker started
// for it, each timed from its commit to its arrival at the receiver. The worker's first seconds are reported apart:
// a process just started runs its code before V8 has compiled it for speed, and lags then (docs/BENCHMARKS.md).
import { percentile } from './report.ts';

export interface SteadyLoad {
  rate: number;
  warmupSeconds: number;
  seconds: number;
  /** Writes event `i` in a transaction of its own and announces it; answers its id and the time of its commit. */
  write(i: number): Promise<{ id: string; at: number }>;
  /** Resolves once the receiver has `count` events. */
  untilReceived(count: number): Promise<unknown>;
  /** When the receiver got each event (epoch ms), by its id. */
  arrivals(): Promise<Record<string, number>>;
}

export interface Latencies {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

const summary = (ms: number[]): Latencies => ({
  count: ms.length,
  p50: percentile(ms, 0.5),
  p99: percentile(ms, 0.99),
  max: Math.max(...ms),
});

/** The warm-up's latencies (the worker's first seconds) and the timed seconds' after it. */
export async function runSteadyLoad(load: SteadyLoad): Promise<{ warmup: Latencies; timed: Latencies }> {
  const committed: { id: string; at: number; timed: boolean }[] = [];
  const startedAt = performance.now();
  const writes: Promise<void>[] = [];
  for (let i = 0; performance.now() - startedAt < (load.warmupSeconds + load.seconds) * 1000; i++) {
    const timed = performance.now() - startedAt >= load.warmupSeconds * 1000;
    const wait = startedAt + (i * 1000) / load.rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    writes.push(load.write(i).then(({ id, at }) => void committed.push({ id, at, timed })));
  }
  await Promise.all(writes);
  await load.untilReceived(committed.length);
  const arrivals = await load.arrivals();
  const latency = (c: (typeof committed)[number]) => arrivals[c.id]! - c.at;
  const first = Math.min(...committed.map((c) => c.at));
  const bySecond = new Map<number, number[]>();
  for (const c of committed) {
    const second = Math.floor((c.at - first) / 1000);
    bySecond.set(second, [...(bySecond.get(second) ?? []), latency(c)]);
  }
  console.log(
    `steady ${load.rate}/s, latency by the second of its commit (p50/max ms): ` +
      [...bySecond].map(([s, ms]) => `${s}: ${percentile(ms, 0.5)}/${Math.max(...ms)}`).join(', '),
  );
  const of = (timed: boolean) =>
    committed
      .filter((c) => c.timed === timed)
      .map(latency)
      .filter(Number.isFinite);
  return { warmup: summary(of(false)), timed: summary(of(true)) };
}
