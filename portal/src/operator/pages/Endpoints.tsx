import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { Empty, Loaded } from '../../ui';
import { useAdmin } from '../Console';
import { type Answers, call, type Inputs } from '../trpc';
import { utc } from './search';

type Config = Answers['accounts']['get']['webhookConfigs'][number];
type Health = NonNullable<Exclude<Inputs['webhookConfigs']['list'], void | undefined>['health']>;
/** Every health the procedure takes, with what the list says of it. */
const HEALTH = { all: 'all', failing: 'failing now', disabled: 'disabled' } satisfies Record<Health, string>;
const isHealth = (value: string | null): value is Health => value !== null && Object.hasOwn(HEALTH, value);

/** Enabled and fine, failing since when, or disabled and why. */
export function EndpointState({ config }: { config: Pick<Config, 'enabled' | 'failingSince' | 'disabledReason'> }) {
  if (!config.enabled)
    return (
      <span className="bad">
        disabled {config.disabledReason === 'failing' ? 'after failing' : 'by the integrator'}
        {config.failingSince && ` (failing since ${utc(config.failingSince)})`}
      </span>
    );
  if (config.failingSince) return <span className="bad">failing since {utc(config.failingSince)}</span>;
  return <span className="ok">enabled</span>;
}

export function Endpoints() {
  const admin = useAdmin();
  const [params, setParams] = useSearchParams();
  const asked = params.get('health');
  const health: Health = isHealth(asked) ? asked : 'all';
  const list = useQuery({
    queryKey: ['endpoints', health],
    queryFn: () => call(admin.webhookConfigs.list.query({ health })),
  });
  return (
    <>
      <h1>Webhook configurations</h1>
      <div className="toolbar">
        <div className="field">
          <label htmlFor="endpoint-health">Show</label>
          <select id="endpoint-health" value={health} onChange={(e) => setParams({ health: e.target.value })}>
            {Object.entries(HEALTH).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
      </div>
      <Loaded query={list}>
        {({ items }) =>
          items.length === 0 ? (
            <Empty>No webhook configuration {health === 'all' ? 'yet' : `is ${health}`}.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Account</th>
                  <th scope="col">Scope</th>
                  <th scope="col">URL</th>
                  <th scope="col">Health</th>
                </tr>
              </thead>
              <tbody>
                {items.map((c) => (
                  <tr key={`${c.accountId}/${c.scope}`}>
                    <td>
                      <Link to={`/accounts/${c.accountId}`}>{c.accountName}</Link>
                    </td>
                    <td>{c.scope}</td>
                    <td>{c.url ?? '—'}</td>
                    <td>
                      <EndpointState config={c} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </>
  );
}
