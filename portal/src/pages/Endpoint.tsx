import { useState, type FormEvent } from 'react';
import { api, call } from '../api/client';
import type { components, operations } from '../api/schema';
import { Empty, Loaded, ProblemBox, useAction, useLoad } from '../ui';
import { formatDuration, formatUtc } from '../dates';

type Config = operations['webhookConfig-get']['responses'][200]['content']['application/json'];
type Put = operations['webhookConfig-put']['requestBody']['content']['application/json'];
type EventType = NonNullable<operations['webhookConfig-test']['requestBody']['content']['application/json']['eventType']>;
type Issue = NonNullable<components['schemas']['Problem']['issues']>[number];

const TRANSFORMERS: Put['transformer'][] = ['default', 'partner-format'];
const VERSIONS: Put['version'][] = ['1.0.0', '1.1.0', '1.3.0'];
const EVENT_TYPES: EventType[] = ['WebhookTestEvent', 'OrderStatusEvent', 'InvoiceEvent', 'CommandResultEvent', 'CommandErrorEvent'];

async function loadConfig(): Promise<Config | null> {
  const { data, error, response } = await api.GET('/v3/webhook-config');
  if (response.status === 404) return null;
  if (error) throw error;
  return data;
}

export function Endpoint() {
  const [load, reload] = useLoad(loadConfig, []);
  return (
    <>
      <h1>Endpoint</h1>
      <Loaded load={load}>
        {(config) => (
          <>
            {config ? <Summary config={config} /> : <Empty>Your account has no endpoint of its own yet: set its URL below.</Empty>}
            <EditForm config={config} onSaved={reload} />
            {config?.url && <RotateKey config={config} onRotated={reload} />}
            {config?.url && <SendExample />}
          </>
        )}
      </Loaded>
    </>
  );
}

/** A plain sentence of what the endpoint's state means and what to do. */
export function healthSentence(config: Config): string {
  if (!config.url) return 'No URL is set: nothing is delivered. Your events are still in the feed.';
  if (config.disabledReason === 'failing') {
    return `Disabled because it kept failing${config.failingSince ? ` since ${formatUtc(config.failingSince)}` : ''}: nothing new is delivered. `
      + 'Fix your receiver, save the endpoint enabled, then redeliver the failed deliveries.';
  }
  if (!config.enabled) return 'Disabled by you: nothing new is delivered. Your events are still in the feed; enable it to receive them again.';
  if (config.failingSince) {
    return `Failing since ${formatUtc(config.failingSince)}: your receiver has not answered 2xx since then. Deliveries are retried; `
      + 'fix it soon, or the endpoint is disabled. Then redeliver what failed.';
  }
  return 'Healthy: deliveries are being sent and answered.';
}

function Summary({ config }: { config: Config }) {
  return (
    <section aria-labelledby="now-heading">
      <h2 id="now-heading">Now</h2>
      <dl className="facts">
        <dt>URL</dt><dd>{config.url ?? '—'}</dd>
        <dt>Transformer</dt><dd>{config.transformer}</dd>
        <dt>Version</dt><dd>{config.version}</dd>
        <dt>Enabled</dt><dd>{config.enabled ? 'yes' : 'no'}</dd>
        <dt>Signature key</dt><dd>{config.hasSignatureKey ? 'set' : 'none'}{config.previousKeyExpiresAt && `; the previous key is valid until ${formatUtc(config.previousKeyExpiresAt)}`}</dd>
        <dt>Health</dt><dd data-testid="health">{healthSentence(config)}</dd>
      </dl>
    </section>
  );
}

function FieldIssues({ issues, field }: { issues: Issue[]; field: string }) {
  const mine = issues.filter((i) => i.path === field || i.path.startsWith(`${field}.`));
  if (mine.length === 0) return null;
  return <p className="issue" id={`${field}-issue`}>{mine.map((i) => i.message).join(' ')}</p>;
}

function EditForm({ config, onSaved }: { config: Config | null; onSaved: () => void }) {
  const [url, setUrl] = useState(config?.url ?? '');
  const [transformer, setTransformer] = useState<Put['transformer']>(config?.transformer ?? 'default');
  const [version, setVersion] = useState<Put['version']>(config?.version ?? '1.3.0');
  const [enabled, setEnabled] = useState(config?.enabled ?? true);
  const [key, setKey] = useState('');
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const issues = save.problem?.issues ?? [];
  const described = (field: string) => (issues.some((i) => i.path === field) ? `${field}-issue` : undefined);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    void save.run(async () => {
      const body: Put = { url, transformer, version, enabled, ...(key && { signatureKey: key }) };
      await call(api.PUT('/v3/webhook-config', { body }));
      setKey('');
      setSaved(true);
      onSaved();
    });
  };
  return (
    <form onSubmit={submit} aria-labelledby="edit-heading" noValidate>
      <h2 id="edit-heading">Edit</h2>
      <label htmlFor="url">URL</label>
      <input id="url" type="url" value={url} onChange={(e) => setUrl(e.target.value)} aria-invalid={Boolean(described('url'))} aria-describedby={described('url')} />
      <FieldIssues issues={issues} field="url" />
      <label htmlFor="transformer">Transformer</label>
      <select id="transformer" value={transformer} onChange={(e) => setTransformer(e.target.value as Put['transformer'])} aria-describedby={described('transformer')}>
        {TRANSFORMERS.map((t) => <option key={t}>{t}</option>)}
      </select>
      <FieldIssues issues={issues} field="transformer" />
      <label htmlFor="version">Version</label>
      <select id="version" value={version} onChange={(e) => setVersion(e.target.value as Put['version'])} aria-describedby={described('version')}>
        {VERSIONS.map((v) => <option key={v}>{v}</option>)}
      </select>
      <FieldIssues issues={issues} field="version" />
      <div className="check">
        <input id="enabled" type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        <label htmlFor="enabled">Enabled</label>
      </div>
      <label htmlFor="signatureKey">New signature key (leave empty to keep the current one)</label>
      <input id="signatureKey" type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} aria-describedby={described('signatureKey')} />
      <FieldIssues issues={issues} field="signatureKey" />
      <button type="submit" disabled={save.busy}>Save</button>
      {saved && <p role="status">Saved.</p>}
      {save.problem && <ProblemBox problem={save.problem} />}
    </form>
  );
}

function RotateKey({ config, onRotated }: { config: Config; onRotated: () => void }) {
  const [key, setKey] = useState('');
  const [hours, setHours] = useState('24');
  const [done, setDone] = useState('');
  const rotate = useAction();
  const issues = rotate.problem?.issues ?? [];
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setDone('');
    void rotate.run(async () => {
      const answer = await call(api.POST('/v3/webhook-config/rotate-key', {
        body: { signatureKey: key, previousKeyValidFor: Math.round(Number(hours) * 3600) },
      }));
      setKey('');
      setDone(answer.previousKeyExpiresAt
        ? `Rotated: webhooks are signed with both keys until ${formatUtc(answer.previousKeyExpiresAt)}.`
        : 'Rotated: the previous key is no longer valid.');
      onRotated();
    });
  };
  if (!config.hasSignatureKey) return null;
  return (
    <form onSubmit={submit} aria-labelledby="rotate-heading" noValidate>
      <h2 id="rotate-heading">Rotate the signature key</h2>
      <p className="muted">Your receiver can verify with either key while both are valid; switch it to the new key within that window.</p>
      <label htmlFor="newKey">New key (16 characters or more)</label>
      <input id="newKey" type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} />
      <FieldIssues issues={issues} field="signatureKey" />
      <label htmlFor="overlap">Keep the current key valid for (hours)</label>
      <input id="overlap" type="number" min="0" max="168" step="any" value={hours} onChange={(e) => setHours(e.target.value)} />
      <FieldIssues issues={issues} field="previousKeyValidFor" />
      <button type="submit" disabled={rotate.busy}>Rotate the key</button>
      {done && <p role="status">{done}</p>}
      {rotate.problem && <ProblemBox problem={rotate.problem} />}
    </form>
  );
}

type TestAnswer = operations['webhookConfig-test']['responses'][200]['content']['application/json'];

function SendExample() {
  const [eventType, setEventType] = useState<EventType>('WebhookTestEvent');
  const [answer, setAnswer] = useState<(TestAnswer & { at: string; eventType: EventType }) | null>(null);
  const send = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setAnswer(null);
    void send.run(async () => {
      const result = await call(api.POST('/v3/webhook-config/test', { body: { eventType } }));
      setAnswer({ ...result, at: new Date().toISOString(), eventType });
    });
  };
  return (
    <form onSubmit={submit} aria-labelledby="example-heading">
      <h2 id="example-heading">Send an example event</h2>
      <label htmlFor="eventType">Event type</label>
      <select id="eventType" value={eventType} onChange={(e) => setEventType(e.target.value as EventType)}>
        {EVENT_TYPES.map((t) => <option key={t}>{t}</option>)}
      </select>
      <button type="submit" disabled={send.busy}>Send</button>
      {answer && (
        <p role="status" className={answer.delivered ? 'ok' : 'bad'} data-testid="example-result">
          {answer.eventType} {answer.delivered ? 'delivered' : 'not delivered'} at {formatUtc(answer.at)}: status {answer.statusCode ?? 'none'}, {formatDuration(answer.durationMs)}
          {answer.error && `, ${answer.error}`}
        </p>
      )}
      {send.problem && <ProblemBox problem={send.problem} />}
    </form>
  );
}
