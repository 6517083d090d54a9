import { useState, type FormEvent } from 'react';
import { api, call } from '../api/client';
import type { operations } from '../api/schema';
import { Empty, Json, Loaded, ProblemBox, useAction, useLoad, when } from '../ui';

type Page = operations['webhookDeliveries-list']['responses'][200]['content']['application/json'];
type Status = NonNullable<NonNullable<operations['webhookDeliveries-list']['parameters']['query']>['status']>;
/** GET /v3/webhook-deliveries/{id}: the delivery as listed, its payload, and each attempt's request and response. */
type Detail = operations['webhookDeliveries-get']['responses'][200]['content']['application/json'];

const PAGE_SIZE = 20;
export function Deliveries() {
  const [status, setStatus] = useState<Status | ''>('');
  const [cursors, setCursors] = useState<string[]>([]);
  const before = cursors.at(-1);
  const [load, reload] = useLoad(async () => {
    const page = await call(api.GET('/v3/webhook-deliveries', {
      params: { query: { limit: PAGE_SIZE, ...(status && { status }), ...(before && { before }) } },
    }));
    return page;
  }, [status, before]);

  return (
    <>
      <h1>Deliveries</h1>
      <div className="toolbar">
        <label htmlFor="status">Status</label>
        <select id="status" value={status} onChange={(e) => { setStatus(e.target.value as Status | ''); setCursors([]); }}>
          <option value="">all</option>
          <option value="pending">pending</option>
          <option value="delivered">delivered</option>
          <option value="failed">failed</option>
        </select>
        <button type="button" className="secondary" onClick={reload}>Refresh</button>
      </div>
      <Loaded load={load}>
        {(page) => page.items.length === 0
          ? <Empty>{cursors.length ? 'No more deliveries.' : status ? `No ${status} deliveries.` : 'No deliveries yet: they appear here as your events are sent.'}</Empty>
          : (
            <table>
              <caption className="visually-hidden">Deliveries, newest first</caption>
              <thead><tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {page.items.map((d) => {
                  const last = d.attempts.at(-1);
                  return (
                    <tr key={d.id}>
                      <td><a href={`#/deliveries/${encodeURIComponent(d.id)}`}>{when(d.createdAt)}</a></td>
                      <td>{d.eventType}</td>
                      <td><span className={`status ${d.status}`}>{d.status}</span></td>
                      <td>{d.attempts.length}</td>
                      <td>{last ? `${last.statusCode ?? 'no answer'}${last.error ? `: ${last.error}` : ''}` : '—'}</td>
                      <td><Redeliver id={d.id} onDone={reload} /></td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
      </Loaded>
      <nav className="pager" aria-label="Pages of deliveries">
        <button type="button" className="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>Newer</button>
        <button type="button" className="secondary" disabled={load.state !== 'ok' || !load.data.next}
          onClick={() => { if (load.state === 'ok' && load.data.next) setCursors([...cursors, load.data.next]); }}>Older</button>
      </nav>
      <RedeliverFailed onDone={reload} />
    </>
  );
}

function Redeliver({ id, onDone }: { id: string; onDone: () => void }) {
  const action = useAction();
  const [done, setDone] = useState(false);
  return (
    <>
      <button type="button" className="secondary" disabled={action.busy} aria-label={`Redeliver ${id}`}
        onClick={() => void action.run(async () => {
          await call(api.POST('/v3/webhook-deliveries/{id}/redeliver', { params: { path: { id } } }));
          setDone(true);
          onDone();
        })}>Redeliver</button>
      {done && <span role="status" className="muted"> queued</span>}
      {action.problem && <ProblemBox problem={action.problem} />}
    </>
  );
}

function RedeliverFailed({ onDone }: { onDone: () => void }) {
  const [since, setSince] = useState(() => new Date(Date.now() - 86_400_000).toISOString().slice(0, 16));
  const [count, setCount] = useState<number | null>(null);
  const action = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setCount(null);
    void action.run(async () => {
      const answer = await call(api.POST('/v3/webhook-deliveries/redeliver-failed', { body: { since: new Date(`${since}Z`).toISOString() } }));
      setCount(answer.count);
      onDone();
    });
  };
  return (
    <form onSubmit={submit} aria-labelledby="again-heading">
      <h2 id="again-heading">Redeliver every failed delivery</h2>
      <label htmlFor="since">Created at or after (UTC)</label>
      <input id="since" type="datetime-local" required value={since} onChange={(e) => setSince(e.target.value)} />
      <button type="submit" disabled={action.busy}>Redeliver failed</button>
      {count !== null && <p role="status">{count === 1 ? '1 delivery is' : `${count} deliveries are`} pending again.</p>}
      {action.problem && <ProblemBox problem={action.problem} />}
    </form>
  );
}

export function DeliveryDetail({ id }: { id: string }) {
  const [load, reload] = useLoad(() => call(api.GET('/v3/webhook-deliveries/{id}', { params: { path: { id } } })), [id]);
  return (
    <>
      <p><a href="#/deliveries">← All deliveries</a></p>
      <h1>Delivery</h1>
      <Loaded load={load}>
        {(detail) => (
          <>
            <dl className="facts">
              <dt>Id</dt><dd><code>{detail.id}</code></dd>
              <dt>Event</dt><dd>{detail.eventType} <code>{detail.eventId}</code></dd>
              <dt>URL</dt><dd>{detail.url ?? '—'}</dd>
              <dt>Status</dt><dd><span className={`status ${detail.status}`}>{detail.status}</span></dd>
              <dt>Created</dt><dd>{when(detail.createdAt)}</dd>
              <dt>Next attempt</dt><dd>{when(detail.nextAttemptAt)}</dd>
            </dl>
            <Redeliver id={detail.id} onDone={reload} />{' '}
            <button type="button" className="secondary" onClick={reload}>Refresh</button>
            <h2>Payload</h2>
            <Json value={detail.payload} label="Payload" />
            <h2>Attempts</h2>
            {detail.attempts.length === 0 ? <Empty>No attempt yet.</Empty> : (
              <ol className="attempts">
                {detail.attempts.map((a, index) => (
                  <li key={index}>
                    <h3>{when(a.at)}: {a.statusCode ?? 'no answer'}, {a.durationMs} ms</h3>
                    {a.error && <p>{a.error}</p>}
                    {a.request
                      ? (<><h4>Request</h4><Json value={a.request} label={`Request of attempt ${index + 1}`} /></>)
                      : <p className="muted">Nothing was sent (the endpoint was disabled or had no URL).</p>}
                    {a.request && (a.response
                      ? (<><h4>Response</h4><Json value={a.response.headers} label={`Response headers of attempt ${index + 1}`} />
                          <pre className="json" tabIndex={0} aria-label={`Response body of attempt ${index + 1}`} data-testid="response-body">{a.response.body || '(empty body)'}</pre></>)
                      : <p className="muted">No answer came.</p>)}
                  </li>
                ))}
              </ol>
            )}
          </>
        )}
      </Loaded>
    </>
  );
}
