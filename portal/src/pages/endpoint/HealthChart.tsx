import { useQuery } from '@tanstack/react-query';
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { useEffect, useRef, useState } from 'react';
import { api, call } from '../../api/client';
import type { operations } from '../../api/schema';
import { formatDuration, formatUtc } from '../../dates';
import { Loaded } from '../../ui';

// Only the parts of Chart.js a stacked bar chart draws with, so that the rest stays out of the bundle.
Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

type Stats = operations['webhookDeliveries-stats']['responses'][200]['content']['application/json'];
type Bucket = Stats['items'][number];
type Span = 'day' | 'month';

const HOUR = 3_600_000;
const SPANS: Record<Span, { label: string; bucket: 'hour' | 'day'; back: number; name: string }> = {
  day: { label: 'Last 24 hours', bucket: 'hour', back: 23 * HOUR, name: 'per hour over the last 24 hours' },
  month: { label: 'Last 30 days', bucket: 'day', back: 29 * 24 * HOUR, name: 'per day over the last 30 days' },
};
// Told apart by lightness as well as hue (blue against orange), so that red-green colour blindness does not merge them.
// The light orange has an edge dark enough against white (5.7:1, where the fill alone is 2.1:1; WCAG 1.4.11 asks 3:1).
const COLORS = { succeeded: '#0b57d0', failed: '#f29f3d' };
const EDGES = { succeeded: '#0b57d0', failed: '#a34f00' };

/** A bucket's start as its axis label: `05:00` for an hour, `11-29` for a day (UTC, as everywhere in the portal). */
const tick = (start: string, bucket: 'hour' | 'day') => (bucket === 'hour' ? start.slice(11, 16) : start.slice(5, 10));

/**
 * The endpoint's attempts per hour (24 hours) or per day (30 days), answered 2xx against the others, beside the health
 * sentence: from GET /v3/webhook-deliveries/stats, asked again every minute. The same numbers are a table for those
 * who do not see the chart.
 */
export function HealthChart() {
  const [span, setSpan] = useState<Span>('day');
  const { bucket, back, name } = SPANS[span];
  const stats = useQuery({
    queryKey: ['webhook-deliveries', 'stats', span],
    queryFn: () =>
      call(
        api.GET('/v3/webhook-deliveries/stats', {
          params: { query: { bucket, from: new Date(Date.now() - back).toISOString() } },
        }),
      ),
    refetchInterval: 60_000,
  });
  return (
    <section aria-labelledby="chart-heading" className="health-chart">
      <h2 id="chart-heading">Attempts</h2>
      <div className="segmented" role="group" aria-label="Span">
        {(Object.keys(SPANS) as Span[]).map((s) => (
          <button key={s} type="button" className="secondary" aria-pressed={s === span} onClick={() => setSpan(s)}>
            {SPANS[s].label}
          </button>
        ))}
      </div>
      <Loaded query={stats}>{(answer) => <Drawn stats={answer} name={name} />}</Loaded>
    </section>
  );
}

function Drawn({ stats, name }: { stats: Stats; name: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<'bar'> | null>(null);
  const total = (key: 'succeeded' | 'failed') => stats.items.reduce((sum, b) => sum + b[key], 0);
  const summary = `Attempts ${name}: ${total('succeeded')} answered 2xx, ${total('failed')} failed.`;

  useEffect(() => {
    chart.current = new Chart(canvas.current!, {
      type: 'bar',
      data: { labels: [], datasets: [] },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: {
          x: { stacked: true, ticks: { autoSkip: true, maxRotation: 0 } },
          y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } },
        },
        plugins: { legend: { position: 'bottom' } },
      },
    });
    return () => chart.current?.destroy();
  }, []);
  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    c.data.labels = stats.items.map((b) => tick(b.start, stats.bucket));
    c.data.datasets = (['succeeded', 'failed'] as const).map((key) => ({
      label: key === 'succeeded' ? 'Answered 2xx' : 'Failed',
      data: stats.items.map((b) => b[key]),
      backgroundColor: COLORS[key],
      borderColor: EDGES[key],
      borderWidth: 1,
    }));
    c.update();
  }, [stats]);

  const busy = stats.items.filter((b) => b.attempts > 0);
  return (
    <>
      <div className="chart-box">
        <canvas ref={canvas} role="img" aria-label={summary} data-testid="health-chart" />
      </div>
      <p className="muted" data-testid="health-summary">
        {summary}
      </p>
      <details>
        <summary>The numbers</summary>
        {busy.length === 0 ? (
          <p className="muted">No attempt in this span.</p>
        ) : (
          <table data-testid="health-table">
            <caption className="visually-hidden">Attempts {name}, buckets with attempts only</caption>
            <thead>
              <tr>
                <th scope="col">From (UTC)</th>
                <th scope="col">2xx</th>
                <th scope="col">Failed</th>
                <th scope="col">Median</th>
                <th scope="col">p99</th>
              </tr>
            </thead>
            <tbody>
              {busy.map((b) => (
                <Row key={b.start} b={b} />
              ))}
            </tbody>
          </table>
        )}
      </details>
    </>
  );
}

const Row = ({ b }: { b: Bucket }) => (
  <tr>
    <td>{formatUtc(b.start)}</td>
    <td>{b.succeeded}</td>
    <td>{b.failed}</td>
    <td>{b.p50Ms === null ? '—' : formatDuration(b.p50Ms)}</td>
    <td>{b.p99Ms === null ? '—' : formatDuration(b.p99Ms)}</td>
  </tr>
);
