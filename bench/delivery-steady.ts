// bench:delivery's steady load: events written one per transaction at a fixed rate (open loop) to a worker started
// for it, each timed from its commit to its arrival at the receiver. The worker's first seconds are reported apart:
// a process just started runs its code before V8 has compiled it for speed, and lags then (docs/BENCHMARKS.md).
import { met, percentile } from './report.ts';

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

/** Null for no events (a run without warm-up); min and max by a loop: a long run has too many to spread. */
function summary(ms: number[]): Latencies | null {
  if (ms.length === 0) return null;
  let max = -Infinity;
  for (const x of ms) max = Math.max(max, x);
  return { count: ms.length, p50: percentile(ms, 0.5), p99: percentile(ms, 0.99), max };
}

/** The warm-up's latencies (the worker's first seconds) and the timed seconds' after it. */
export async function runSteadyLoad(load: SteadyLoad): Promise<{ warmup: Latencies | null; timed: Latencies | null }> {
  const committed: { id: string; at: number; timed: boolean }[] = [];
  const startedAt = performance.now();
  const writes: Promise<void>[] = [];
  const slots = load.rate * (load.warmupSeconds + load.seconds);
  for (let i = 0; i < slots; i++) {
    // By its slot, not by the clock when the loop gets there: the warm-up holds rate × its seconds.
    const timed = i >= load.rate * load.warmupSeconds;
    const wait = startedAt + (i * 1000) / load.rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    // The commit's time is taken when its answer is handled: late by whatever this loop was busy with, never early.
    writes.push(load.write(i).then(({ id, at }) => void committed.push({ id, at, timed })));
  }
  await Promise.all(writes);
  await load.untilReceived(committed.length);
  const arrivals = await load.arrivals();
  const measured = committed.map((c) => ({ ...c, ms: arrivals[c.id]! - c.at })).filter((c) => Number.isFinite(c.ms));
  let first = Infinity;
  for (const c of measured) first = Math.min(first, c.at);
  const bySecond = new Map<number, number[]>();
  for (const c of measured) {
    const second = Math.floor((c.at - first) / 1000);
    let bucket = bySecond.get(second);
    if (!bucket) bySecond.set(second, (bucket = []));
    bucket.push(c.ms);
  }
  console.log(
    `steady ${load.rate}/s, latency by the second of its commit (p50/max ms): ` +
      [...bySecond].map(([s, ms]) => `${s}: ${percentile(ms, 0.5)}/${summary(ms)!.max}`).join(', '),
  );
  const of = (timed: boolean) => summary(measured.filter((c) => c.timed === timed).map((c) => c.ms));
  return { warmup: of(false), timed: of(true) };
}

/** The report's sentences: what the steady load measured, and its targets (p50 ≤ 50 ms, p99 ≤ 250 ms) after warm-up. */
export function describeSteadyLoad(
  { warmup, timed }: { warmup: Latencies | null; timed: Latencies | null },
  warmupSeconds: number,
  seconds: number,
): { measured: string; targets: string } {
  if (!timed) throw new Error('no event was timed: BENCH_SECONDS must be more than 0');
  const first = warmup
    ? `Its first ${warmupSeconds} s, while the fresh process warms up: ${warmup.count} events, p50 ${warmup.p50} ms, ` +
      `p99 ${warmup.p99} ms, the latest ${warmup.max} ms. The ${seconds} s after them`
    : `No warm-up: all ${seconds} s`;
  return {
    measured:
      `${first}: ${timed.count} events, p50 **${timed.p50} ms**, p99 **${timed.p99} ms**, ` +
      `the latest ${timed.max} ms.`,
    targets:
      `commit-to-receipt p50 ≤ 50 ms: ${timed.p50} ms, ${met(timed.p50 <= 50)}; p99 ≤ 250 ms: ${timed.p99} ms, ` +
      `${met(timed.p99 <= 250)} (the ${seconds} s after the fresh worker's first ${warmupSeconds}; in those, p99 ` +
      `${warmup?.p99 ?? '–'} ms)`,
  };
}
