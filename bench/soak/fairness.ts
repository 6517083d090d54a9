// Fairness, after the PostgreSQL soak: a quiet tenant's latency alone and while a noisy tenant hammers its listing.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { median } from '../report.ts';
import {
  diskStallMs,
  FAIRNESS_ROUNDS,
  FAIRNESS_SECONDS,
  NOISE_CONNECTIONS,
  NOISE_RATE,
  QUIET_RATE,
  root,
  since,
  sleep,
} from './config.ts';
import { addResults, type NoiseResult, openLoop, Stats, type Target } from './load.ts';
import { children } from './processes.ts';
import { ms, p } from './report.ts';
import type { Tenant } from './tenants.ts';

/**
 * FAIRNESS_ROUNDS rounds of the quiet tenant alone and under the noise paced at NOISE_RATE, alternately first, then
 * once under unpaced noise; judged on the median round.
 */
export async function fairness({
  targets,
  quiet,
  noisyToken,
  runStart,
}: {
  targets: Target[];
  quiet: Tenant;
  noisyToken: string;
  runStart: number;
}) {
  /**
   * The quiet tenant, recorded in `quietStats`, while the noisy one hammers its listing over NOISE_CONNECTIONS
   * connections, paced evenly at `rate` requests a second in all (bench/noise.ts), or as fast as the connections go
   * (rate 0: autocannon).
   */
  const withNoise = async (rate: number, quietStats: Stats, stalled = { ms: 0 }) => {
    const urls = targets.map((t) => `http://127.0.0.1:${t.port}/v3/partner-orders/paginated?page=1&pageSize=20`);
    const seconds = String(FAIRNESS_SECONDS + 3);
    const noise = spawn(
      process.execPath,
      rate > 0
        ? [
            '--import',
            'tsx',
            join(root, 'bench/noise.ts'),
            '--rate',
            String(rate),
            '--connections',
            String(NOISE_CONNECTIONS),
            '--seconds',
            seconds,
            '--header',
            `authorization=Bearer ${noisyToken}`,
            ...urls,
          ]
        : [
            join(root, 'node_modules/autocannon/autocannon.js'),
            '-j',
            '-c',
            String(NOISE_CONNECTIONS),
            '-d',
            seconds,
            '-H',
            `authorization=Bearer ${noisyToken}`,
            ...urls,
          ],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(noise);
    let noiseOut = '';
    noise.stdout!.on('data', (d: Buffer) => {
      noiseOut += d;
    });
    noise.stderr!.on('data', (d: Buffer) => {
      noiseOut += d;
    });
    const noiseDone = new Promise<void>((resolve) => noise.on('exit', () => resolve()));
    await sleep(2000); // the noise is at full speed before the quiet tenant is measured
    const stall0 = diskStallMs();
    await openLoop({
      seconds: FAIRNESS_SECONDS,
      rate: QUIET_RATE,
      tenants: [quiet],
      targets,
      stats: quietStats,
      phase: `quiet under noise (${rate || 'unpaced'})`,
    });
    stalled.ms += diskStallMs() - stall0;
    await noiseDone;
    const noiseJson = /\{"title".*\}|\{"url".*\}/.exec(noiseOut)?.[0];
    if (!noiseJson) throw new Error(`the noise gave no result:\n${noiseOut.slice(-2000)}`);
    return JSON.parse(noiseJson) as NoiseResult;
  };
  const rounds: { alone: Stats; noise: Stats; result: NoiseResult; aloneStall: number; noiseStall: number }[] = [];
  for (let r = 1; r <= FAIRNESS_ROUNDS; r++) {
    const round = { alone: new Stats(), noise: new Stats() };
    const noiseStall = { ms: 0 };
    let aloneStall = 0;
    const alonePhase = async () => {
      const stall0 = diskStallMs();
      await openLoop({
        seconds: FAIRNESS_SECONDS,
        rate: QUIET_RATE,
        tenants: [quiet],
        targets,
        stats: round.alone,
        phase: `quiet alone (round ${r})`,
      });
      aloneStall = diskStallMs() - stall0;
    };
    // Alone first in odd rounds, noise first in even ones: whatever a phase leaves behind falls on both sides alike.
    let result: NoiseResult;
    if (r % 2 === 1) {
      await alonePhase();
      result = await withNoise(NOISE_RATE, round.noise, noiseStall);
    } else {
      result = await withNoise(NOISE_RATE, round.noise, noiseStall);
      await sleep(2000);
      await alonePhase();
    }
    rounds.push({ ...round, result, aloneStall, noiseStall: noiseStall.ms });
    const [a, n] = [p(round.alone.latencies, 0.99), p(round.noise.latencies, 0.99)];
    console.log(
      `[${since(runStart)} s] fairness round ${r}: quiet p99 ${ms(a)} ms alone, ${ms(n)} ms under noise at ${NOISE_RATE}/s (${(n / a).toFixed(2)}×); ` +
        `disk waited on ${aloneStall.toFixed(0)} ms alone, ${noiseStall.ms.toFixed(0)} ms under noise`,
    );
    await sleep(2000);
  }
  const alone = Stats.pooled(rounds.map((r) => r.alone));
  const quietAloneP99 = p(alone.latencies, 0.99);
  const judged = (quietStats: Stats, result: NoiseResult) => {
    const codes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]));
    const other =
      Object.entries(codes)
        .filter(([code]) => code !== '429' && !code.startsWith('2'))
        .reduce((a, [, n]) => a + n, 0) + result.errors;
    const quietP99 = p(quietStats.latencies, 0.99);
    console.log(
      `[${since(runStart)} s] fairness: quiet p99 ${ms(quietAloneP99)} ms alone, ${ms(quietP99)} ms under noise (${(quietP99 / quietAloneP99).toFixed(2)}×); ` +
        `noise ${JSON.stringify(codes)}, errors ${result.errors}${result.skipped === undefined ? '' : `, skipped ${result.skipped}`}`,
    );
    console.log(
      `  by endpoint, p99/max ms alone → under noise: ${[...quietStats.kinds]
        .map(([kind, k]) => {
          const a = alone.kinds.get(kind)?.latencies ?? [];
          return `${kind} ${ms(p(a, 0.99))}/${ms(Math.max(...a))} → ${ms(p(k.latencies, 0.99))}/${ms(Math.max(...k.latencies))}`;
        })
        .join(', ')}`,
    );
    return { quiet: quietStats, quietP99, ratio: quietP99 / quietAloneP99, codes, other, result };
  };
  const paced = judged(Stats.pooled(rounds.map((r) => r.noise)), addResults(rounds.map((r) => r.result)));
  const unpacedStats = new Stats();
  const unpaced = judged(unpacedStats, await withNoise(0, unpacedStats));
  const roundRatios = rounds.map((r) => p(r.noise.latencies, 0.99) / p(r.alone.latencies, 0.99));
  const ratio = median(roundRatios);
  console.log(
    `[${since(runStart)} s] fairness: the median round ${ratio.toFixed(2)}× (rounds ${roundRatios.map((x) => x.toFixed(2)).join(', ')}; pooled ${paced.ratio.toFixed(2)}×)`,
  );
  return { rounds, alone, quietAloneP99, paced, unpaced, roundRatios, ratio };
}
