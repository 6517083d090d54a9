import { AggregatorRegistry } from 'prom-client';
import type { Logger } from '../logger.ts';
import type { MetricsJson } from './messages.ts';

/** A scrape gathers what the processes report within this; one that does not answer is left out of the sums. */
const REPORT_WITHIN_MS = 2000;

/**
 * The metrics of every process of a cluster, for whichever API process is scraped: each process reports its own
 * registry (`ask`), and prom-client's AggregatorRegistry adds them up, the gauges by the aggregator each declares
 * (server/metrics.ts). Only processes already built are asked: one still starting has nothing to report yet.
 */
export function metricsGatherer(log: Logger) {
  const waiting = new Map<number, (metrics: MetricsJson) => void>();
  let scrapes = 0;
  return {
    async gather<P>(processes: P[], ask: (process: P, id: number) => void): Promise<string | null> {
      const id = ++scrapes;
      const gathered: MetricsJson[] = [];
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, REPORT_WITHIN_MS);
        waiting.set(id, (metrics) => {
          gathered.push(metrics);
          if (gathered.length === processes.length) {
            clearTimeout(timer);
            resolve();
          }
        });
        for (const p of processes) ask(p, id);
      });
      waiting.delete(id);
      if (gathered.length < processes.length)
        log.warn(
          { asked: processes.length, answered: gathered.length },
          'metrics: some processes did not report in time',
        );
      try {
        return await AggregatorRegistry.aggregate(
          gathered as Parameters<typeof AggregatorRegistry.aggregate>[0],
        ).metrics();
      } catch (err) {
        log.error({ err }, "metrics: the processes' reports could not be added up");
        return null;
      }
    },
    /** A process's report for scrape `id` (late ones are dropped). */
    reported(id: number, metrics: MetricsJson) {
      waiting.get(id)?.(metrics);
    },
  };
}
