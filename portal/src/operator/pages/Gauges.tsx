import { useQuery } from '@tanstack/react-query';
import { Loaded } from '../../ui';
import { useAdmin } from '../Console';
import { call } from '../trpc';

const labelsOf = (labels: Record<string, string>) =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');

/** The gauges of GET /metrics as they stand now (every process of a cluster), asked again every 10 s. */
export function Gauges() {
  const admin = useAdmin();
  const gauges = useQuery({
    queryKey: ['gauges'],
    queryFn: () => call(admin.gauges.summary.query()),
    refetchInterval: 10_000,
  });
  return (
    <>
      <h1>Gauges</h1>
      <p className="muted">
        What GET /metrics answers now; the README’s metrics table says what each tells and when to act.
      </p>
      <Loaded query={gauges}>
        {(data) => (
          <table>
            <thead>
              <tr>
                <th scope="col">Gauge</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {data.gauges.flatMap((g) =>
                (g.samples.length ? g.samples : [{ labels: {}, value: Number.NaN }]).map((s) => (
                  <tr key={`${g.name}{${labelsOf(s.labels)}}`}>
                    <th scope="row" title={g.help}>
                      <code>{g.name}</code>
                      {Object.keys(s.labels).length > 0 && <span className="muted"> {labelsOf(s.labels)}</span>}
                      <div className="muted hint">{g.help}</div>
                    </th>
                    <td>{Number.isNaN(s.value) ? '—' : s.value}</td>
                  </tr>
                )),
              )}
            </tbody>
          </table>
        )}
      </Loaded>
    </>
  );
}
