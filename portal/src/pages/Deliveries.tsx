import { useState, type FormEvent } from 'react';
import { api, call } from '../api/client';
import type { Role } from '../api/session';
import type { operations } from '../api/schema';
import { formatUtc, parseUtcInput, utcInputText } from '../dates';
import { UtcDateInput } from '../DateInput';
import { answerText, Empty, Loaded, ProblemBox, useAction, useLoad, useRefreshWhile } from '../ui';
import { orderOf, Redeliver, settlingSoon, ShortId } from './delivery-parts';
import { OrderRef } from './Orders';

type Page = operations['webhookDeliveries-list']['responses'][200]['content']['application/json'];
type Listed = Page['items'][number];
type Status = NonNullable<NonNullable<operations['webhookDeliveries-list']['parameters']['query']>['status']>;

const PAGE_SIZE = 20;
export function Deliveries({ role }: { role: Role }) {
  const [status, setStatus] = useState<Status | ''>('');
  const [cursors, setCursors] = useState<string[]>([]);
  const before = cursors.at(-1);
  const [load, reload] = useLoad(() => call(api.GET('/v3/webhook-deliveries', {
    params: { query: { limit: PAGE_SIZE, ...(status && { status }), ...(before && { before }) } },
  })), [status, before]);
  useRefreshWhile(load.state === 'ok' && load.data.items.some(settlingSoon), reload);

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
            <table className="cards deliveries">
              <caption className="visually-hidden">Deliveries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Created (UTC)</th><th scope="col">Event</th><th scope="col">Order</th><th scope="col">Event id</th>
                  <th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Next attempt</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>{page.items.map((d) => <Row key={d.id} d={d} role={role} onChanged={reload} />)}</tbody>
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

function Row({ d, role, onChanged }: { d: Listed; role: Role; onChanged: () => void }) {
  const last = d.attempts.at(-1);
  const order = orderOf(d);
  return (
    <tr>
      <td data-label="Created"><a href={`#/deliveries/${encodeURIComponent(d.id)}`} data-testid="delivery-link">{formatUtc(d.createdAt)}</a></td>
      <td data-label="Event">{d.eventType}</td>
      <td data-label="Order" data-testid="delivery-order"><OrderRef id={order} role={role} /></td>
      <td data-label="Event id"><ShortId id={d.eventId} /></td>
      <td data-label="Status">
        <span className={`status ${d.status}`}>{d.status}</span>
        {last && !(last.statusCode !== null && last.statusCode < 300) && (
          <span className="answer muted" title={answerText(last.error) || undefined}>
            {last.statusCode ?? 'no answer'}{answerText(last.error) && `: ${answerText(last.error)}`}
          </span>
        )}
      </td>
      <td data-label="Attempts">{d.attempts.length}</td>
      <td data-label="Next attempt">{formatUtc(d.nextAttemptAt)}</td>
      <td data-label="Actions" className="actions"><Redeliver delivery={d} onDone={onChanged} /></td>
    </tr>
  );
}

function RedeliverFailed({ onDone }: { onDone: () => void }) {
  const [since, setSince] = useState(() => utcInputText(new Date(Date.now() - 86_400_000)));
  const [checked, setChecked] = useState(false);
  const [count, setCount] = useState<number | null>(null);
  const action = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setCount(null);
    setChecked(true);
    const at = parseUtcInput(since);
    if (at === null) { document.getElementById('since')?.focus(); return; }
    void action.run(async () => {
      const answer = await call(api.POST('/v3/webhook-deliveries/redeliver-failed', { body: { since: at } }));
      setCount(answer.count);
      onDone();
    });
  };
  return (
    <form onSubmit={submit} aria-labelledby="again-heading" noValidate>
      <h2 id="again-heading">Redeliver every failed delivery</h2>
      <UtcDateInput id="since" label="Created at or after (UTC)" value={since} onChange={setSince} required checked={checked} />
      <button type="submit" disabled={action.busy}>Redeliver failed</button>
      {count !== null && <p role="status">{count === 1 ? '1 delivery is' : `${count} deliveries are`} pending again.</p>}
      {action.problem && <ProblemBox problem={action.problem} />}
    </form>
  );
}
