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
              {data.gauges.map((g) => (
                <tr key={g.name}>
                  <th scope="row">
                    <code>{g.name}</code>
                    <div className="muted hint gauge-help">{g.help}</div>
                  </th>
                  <td>
                    {g.samples.length === 1 && Object.keys(g.samples[0]!.labels).length === 0 ? (
                      g.samples[0]!.value
                    ) : (
                      <ul className="samples">
                        {g.samples.map((s) => (
                          <li key={labelsOf(s.labels)}>
                            {labelsOf(s.labels)}: {s.value}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
    </>
  );
}
