import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, lazy, Suspense, useState } from 'react';
import { api, call } from '../api/client';
import type { operations } from '../api/schema';
import { formatDuration, formatUtc } from '../dates';
import { useMe } from '../identity';
import { Empty, Loaded, Loading, MutationProblem } from '../ui';
import { CONFIG_KEY, type Config, FieldIssues } from './endpoint/config';
import { Keys } from './endpoint/Keys';

// Chart.js is most of the portal's weight: it loads with the Endpoint page's chart, not with sign-in or the lists.
const HealthChart = lazy(() => import('./endpoint/HealthChart').then((m) => ({ default: m.HealthChart })));

type Put = operations['webhookConfig-put']['requestBody']['content']['application/json'];
type EventType = NonNullable<
  NonNullable<operations['webhookConfig-test']['requestBody']>['content']['application/json']['eventType']
>;

const TRANSFORMERS: Put['transformer'][] = ['default', 'partner-format'];
const VERSIONS: Put['version'][] = ['1.0.0', '1.1.0', '1.3.0'];
const EVENT_TYPES: EventType[] = [
  'WebhookTestEvent',
  'OrderStatusEvent',
  'InvoiceEvent',
  'CommandResultEvent',
  'CommandErrorEvent',
];

async function loadConfig(): Promise<Config | null> {
  const { data, error, response } = await api.GET('/v3/webhook-config');
  if (response.status === 404) return null;
  if (error) throw error;
  return data;
}

export function Endpoint() {
  const config = useQuery({ queryKey: CONFIG_KEY, queryFn: loadConfig });
  // A child partner without an endpoint of its own is sent its webhooks at its master's, whose attempts it is shown.
  const me = useMe();
  const child = Boolean(me.data?.account.parentId);
  return (
    <>
      <h1>Endpoint</h1>
      <Loaded query={config}>
        {(current) => (
          <>
            {current ? (
              <Summary config={current} />
            ) : me.isPending ? (
              <Loading />
            ) : child ? (
              <Empty>
                Your account has no endpoint of its own: your webhooks go to your master account&apos;s endpoint, when
                it has one with a URL, which your master manages. Its attempts are below. Setting a URL here gives your
                account an endpoint of its own, and your webhooks go there instead.
              </Empty>
            ) : (
              <Empty>Your account has no endpoint of its own yet: set its URL below.</Empty>
            )}
            {(current?.url || (!current && child)) && (
              <Suspense fallback={<Loading />}>
                <HealthChart />
              </Suspense>
            )}
            <EditForm config={current} />
            {current && <Keys config={current} />}
            {current?.url && <SendExample />}
          </>
        )}
      </Loaded>
    </>
  );
}

/** A plain sentence of what the endpoint's state means and what to do. */
function healthSentence(config: Config): string {
  if (!config.url) return 'No URL is set: nothing is delivered. Your events are still in the feed.';
  if (config.disabledReason === 'failing') {
    return (
      `Disabled because it kept failing${config.failingSince ? ` since ${formatUtc(config.failingSince)}` : ''}: nothing new is delivered. ` +
      'Fix your receiver, save the endpoint enabled, then redeliver the failed deliveries.'
    );
  }
  if (!config.enabled)
    return 'Disabled by you: nothing new is delivered. Your events are still in the feed; enable it to receive them again.';
  if (config.failingSince) {
    return (
      `Failing since ${formatUtc(config.failingSince)}: your receiver has not answered 2xx since then. Deliveries are retried; ` +
      'fix it soon, or the endpoint is disabled. Then redeliver what failed.'
    );
  }
  return 'Healthy: deliveries are being sent and answered.';
}

function Summary({ config }: { config: Config }) {
  return (
    <section aria-labelledby="now-heading">
      <h2 id="now-heading">Now</h2>
      <dl className="facts">
        <dt>URL</dt>
        <dd>{config.url ?? '—'}</dd>
        <dt>Transformer</dt>
        <dd>{config.transformer}</dd>
        <dt>Version</dt>
        <dd>{config.version}</dd>
        <dt>Enabled</dt>
        <dd>{config.enabled ? 'yes' : 'no'}</dd>
        <dt>Signature key</dt>
        <dd>
          {config.hasSignatureKey ? 'set' : 'none'}
          {config.previousKeyExpiresAt && `; the previous key is valid until ${formatUtc(config.previousKeyExpiresAt)}`}
        </dd>
        <dt>Asymmetric signatures</dt>
        <dd>{config.asymmetricSigning ? 'on (v1a, Ed25519): the public key is below' : 'off'}</dd>
        <dt>Health</dt>
        <dd data-testid="health">{healthSentence(config)}</dd>
      </dl>
    </section>
  );
}

function EditForm({ config }: { config: Config | null }) {
  const [url, setUrl] = useState(config?.url ?? '');
  const [transformer, setTransformer] = useState<Put['transformer']>(config?.transformer ?? 'default');
  const [version, setVersion] = useState<Put['version']>(config?.version ?? '1.3.0');
  const [enabled, setEnabled] = useState(config?.enabled ?? true);
  const [asymmetric, setAsymmetric] = useState(config?.asymmetricSigning ?? false);
  const [key, setKey] = useState('');
  const queries = useQueryClient();
  const save = useMutation({
    gcTime: 0, // its input may hold a signature key
    mutationFn: (body: Put) => call(api.PUT('/v3/webhook-config', { body })),
    onSuccess: () => {
      setKey('');
      return queries.invalidateQueries({ queryKey: CONFIG_KEY });
    },
  });
  const issues = save.error?.issues ?? [];
  const described = (field: string) => (issues.some((i) => i.path === field) ? `${field}-issue` : undefined);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate({
      url,
      transformer,
      version,
      enabled,
      asymmetricSigning: asymmetric,
      ...(key && { signatureKey: key }),
    });
  };
  return (
    <form onSubmit={submit} aria-labelledby="edit-heading" noValidate>
      <h2 id="edit-heading">Edit</h2>
      <label htmlFor="url">URL</label>
      <input
        id="url"
        type="url"
        value={url}
        onChange={(e) => setUrl(e.target.value)}
        aria-invalid={Boolean(described('url'))}
        aria-describedby={described('url')}
      />
      <FieldIssues issues={issues} field="url" />
      <label htmlFor="transformer">Transformer</label>
      <select
        id="transformer"
        value={transformer}
        onChange={(e) => setTransformer(e.target.value as Put['transformer'])}
        aria-describedby={described('transformer')}
      >
        {TRANSFORMERS.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <FieldIssues issues={issues} field="transformer" />
      <label htmlFor="version">Version</label>
      <select
        id="version"
        value={version}
        onChange={(e) => setVersion(e.target.value as Put['version'])}
        aria-describedby={described('version')}
      >
        {VERSIONS.map((v) => (
          <option key={v}>{v}</option>
        ))}
      </select>
      <FieldIssues issues={issues} field="version" />
      <div className="check">
        <input id="enabled" type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        <label htmlFor="enabled">Enabled</label>
      </div>
      <div className="check">
        <input
          id="asymmetric"
          type="checkbox"
          checked={asymmetric}
          onChange={(e) => setAsymmetric(e.target.checked)}
          aria-describedby="asymmetric-hint"
        />
        <label htmlFor="asymmetric">Asymmetric signatures (v1a)</label>
      </div>
      <p className="hint muted" id="asymmetric-hint">
        Signs every webhook with an Ed25519 key pair too: your receiver verifies it with the public key alone, no shared
        secret.
      </p>
      <label htmlFor="signatureKey">New signature key (leave empty to keep the current one)</label>
      <input
        id="signatureKey"
        type="password"
        autoComplete="off"
        value={key}
        onChange={(e) => setKey(e.target.value)}
        aria-describedby={described('signatureKey')}
      />
      <FieldIssues issues={issues} field="signatureKey" />
      <button type="submit" disabled={save.isPending}>
        Save
      </button>
      {save.isSuccess && <p role="status">Saved.</p>}
      <MutationProblem mutation={save} />
    </form>
  );
}

type TestAnswer = operations['webhookConfig-test']['responses'][200]['content']['application/json'];

function SendExample() {
  const [eventType, setEventType] = useState<EventType>('WebhookTestEvent');
  const send = useMutation({
    mutationFn: async (type: EventType) => ({
      ...(await call(api.POST('/v3/webhook-config/test', { body: { eventType: type } }))),
      at: new Date().toISOString(),
      eventType: type,
    }),
  });
  const answer: (TestAnswer & { at: string; eventType: EventType }) | undefined = send.data;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    send.mutate(eventType);
  };
  return (
    <form onSubmit={submit} aria-labelledby="example-heading">
      <h2 id="example-heading">Send an example event</h2>
      <label htmlFor="eventType">Event type</label>
      <select id="eventType" value={eventType} onChange={(e) => setEventType(e.target.value as EventType)}>
        {EVENT_TYPES.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <button type="submit" disabled={send.isPending}>
        Send
      </button>
      {answer && !send.isPending && (
        <p role="status" className={answer.delivered ? 'ok' : 'bad'} data-testid="example-result">
          {answer.eventType} {answer.delivered ? 'delivered' : 'not delivered'} at {formatUtc(answer.at)}: status{' '}
          {answer.statusCode ?? 'none'}, {formatDuration(answer.durationMs)}
          {answer.error && `, ${answer.error}`}
        </p>
      )}
      <MutationProblem mutation={send} />
    </form>
  );
}
