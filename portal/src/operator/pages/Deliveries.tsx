import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { answerText, Empty, Json, Loaded, MutationProblem } from '../../ui';
import { useAdmin } from '../Console';
import { call } from '../trpc';
import { useAddressSearch, utc } from './search';

const KINDS = { orderId: 'Order id', eventId: 'Event id', cid: 'Command _cid' } as const;
type Kind = keyof typeof KINDS;
const isKind = (k: string | null): k is Kind => k !== null && k in KINDS;

export function Deliveries() {
  const admin = useAdmin();
  const { asked, text, setText, ask, params } = useAddressSearch();
  const by: Kind = isKind(params.get('by')) ? (params.get('by') as Kind) : 'orderId';
  const found = useQuery({
    queryKey: ['deliveries', by, asked],
    queryFn: () => call(admin.deliveries.search.query({ [by]: asked })),
    enabled: asked !== '',
  });
  return (
    <>
      <h1>Deliveries</h1>
      <p className="muted">Across every account: by the order, the event, or the _cid of the command they tell.</p>
      <form
        role="search"
        className="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          const kind = (e.currentTarget.elements.namedItem('by') as HTMLSelectElement).value;
          ask({ by: kind });
        }}
      >
        <div className="field">
          <label htmlFor="delivery-by">Search by</label>
          <select id="delivery-by" name="by" defaultValue={by}>
            {Object.entries(KINDS).map(([k, label]) => (
              <option key={k} value={k}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="delivery-search">Value</label>
          <input id="delivery-search" type="search" value={text} onChange={(e) => setText(e.target.value)} required />
        </div>
        <button type="submit">Search</button>
      </form>
      {asked && (
        <Loaded query={found}>
          {({ items }) =>
            items.length === 0 ? (
              <Empty>
                No delivery of {KINDS[by].toLowerCase()} “{asked}”.
              </Empty>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Made</th>
                    <th scope="col">Event</th>
                    <th scope="col">Order</th>
                    <th scope="col">Status</th>
                    <th scope="col">Attempts</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((d) => (
                    <tr key={d.id}>
                      <td>
                        <Link to={`/deliveries/${d.id}`}>{utc(d.createdAt)}</Link>
                      </td>
                      <td>{d.eventType}</td>
                      <td>{d.orderId ?? '—'}</td>
                      <td className={`status ${d.status}`}>{d.status}</td>
                      <td>{d.attempts.length}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Loaded>
      )}
    </>
  );
}

export function DeliveryDetail() {
  const admin = useAdmin();
  const client = useQueryClient();
  const { id = '' } = useParams();
  const delivery = useQuery({
    queryKey: ['delivery', id],
    queryFn: () => call(admin.deliveries.get.query({ deliveryId: id })),
  });
  const redeliver = useMutation({
    mutationFn: () => call(admin.deliveries.redeliver.mutate({ deliveryId: id })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['delivery', id] }),
  });
  return (
    <Loaded query={delivery}>
      {(d) => (
        <>
          <h1>
            {d.eventType} <span className={`status ${d.status}`}>{d.status}</span>
          </h1>
          <dl className="facts">
            <dt>Account</dt>
            <dd>
              <AccountName accountId={d.accountId} /> ({d.scope} endpoint)
            </dd>
            <dt>URL</dt>
            <dd>{d.url ?? '—'}</dd>
            <dt>Order</dt>
            <dd>{d.orderId ?? '—'}</dd>
            <dt>Event id</dt>
            <dd>
              <code>{d.eventId}</code>
            </dd>
            <dt>Made</dt>
            <dd>{utc(d.createdAt)}</dd>
            <dt>Next attempt</dt>
            <dd>{utc(d.nextAttemptAt)}</dd>
          </dl>
          <MutationProblem mutation={redeliver} />
          {redeliver.isSuccess && (
            <p role="status" className="ok">
              Sent again: the delivery is pending, its attempts continue.
            </p>
          )}
          <button
            type="button"
            disabled={redeliver.isPending || d.status === 'pending'}
            onClick={() => redeliver.mutate()}
          >
            Redeliver
          </button>
          <h2>Attempts</h2>
          {d.attempts.length === 0 ? (
            <Empty>No attempt yet.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">At</th>
                  <th scope="col">Answer</th>
                  <th scope="col">Took</th>
                  <th scope="col">Error or answer’s start</th>
                  <th scope="col">Trace id</th>
                </tr>
              </thead>
              <tbody>
                {d.attempts.map((a, i) => (
                  <tr key={i}>
                    <td>{utc(a.at)}</td>
                    <td>{a.statusCode ?? 'none'}</td>
                    <td>{a.durationMs} ms</td>
                    <td>{answerText(a.error) || '—'}</td>
                    <td>
                      <code>{traceIdOf(a.request?.headers.traceparent)}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h2>Payload</h2>
          <Json value={d.payload} label="The payload as sent" />
        </>
      )}
    </Loaded>
  );
}

/** The trace an attempt's request carried (CONTRACT §13: `00-<trace id>-<span id>-<flags>`), to find in a collector. */
const traceIdOf = (traceparent: string | undefined) => traceparent?.split('-')[1] ?? '—';

/** The account by its name, once read (the same query as its page, so that opening it next is at once). */
function AccountName({ accountId }: { accountId: string }) {
  const admin = useAdmin();
  const account = useQuery({
    queryKey: ['account', accountId],
    queryFn: () => call(admin.accounts.get.query({ accountId })),
  });
  return <Link to={`/accounts/${accountId}`}>{account.data?.name ?? accountId}</Link>;
}
