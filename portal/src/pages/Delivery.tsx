import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api, call } from '../api/client';
import type { operations } from '../api/schema';
import type { Role } from '../api/session';
import { formatDuration, formatUtc } from '../dates';
import { answerText, Empty, Json, Loaded } from '../ui';
import { Redeliver, ShortId } from './delivery-parts';
import { OrderRef } from './Orders';
import { refreshWhileSettling } from './settling';

/** GET /v3/webhook-deliveries/{id}: the delivery as listed, its payload, and each attempt's request and response. */
type Detail = operations['webhookDeliveries-get']['responses'][200]['content']['application/json'];
type Attempt = Detail['attempts'][number];

const answered2xx = (a: Attempt) => a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300;

/**
 * What the schedule did after an attempt: the next attempt and how long after it came; for the last one, the next
 * attempt due, or why there is none.
 */
function nextStep(detail: Detail, index: number, now = Date.now()): string {
  const attempt = detail.attempts[index]!;
  if (answered2xx(attempt)) return 'delivered';
  const next = detail.attempts[index + 1];
  if (next) return `tried again ${formatDuration(Date.parse(next.at) - Date.parse(attempt.at))} later`;
  if (detail.status === 'failed') return 'no more attempts: failed';
  if (detail.status === 'pending') {
    if (!detail.nextAttemptAt) return 'next attempt: soon';
    const wait = Date.parse(detail.nextAttemptAt) - now;
    return `next attempt ${formatUtc(detail.nextAttemptAt)}${wait > 0 ? ` (in ${formatDuration(wait)})` : ''}`;
  }
  return '';
}

export function DeliveryDetail({ role }: { role: Role }) {
  const id = useParams().id!;
  const delivery = useQuery({
    queryKey: ['webhook-deliveries', 'one', id],
    queryFn: () => call(api.GET('/v3/webhook-deliveries/{id}', { params: { path: { id } } })),
    // A pending delivery is asked for again until its next attempt settles it (a redelivery's included).
    refetchInterval: (query) => refreshWhileSettling(query.state.data ? [query.state.data] : []),
  });
  return (
    <>
      <p>
        <Link to="/deliveries">← All deliveries</Link>
      </p>
      <h1>Delivery</h1>
      <Loaded query={delivery}>
        {(detail) => (
          <>
            <dl className="facts">
              <dt>Event</dt>
              <dd>
                {detail.eventType} <ShortId id={detail.eventId} />
              </dd>
              <dt>Order</dt>
              <dd data-testid="delivery-order">
                <OrderRef id={detail.orderId} role={role} list="deliveries" />
              </dd>
              <dt>Status</dt>
              <dd>
                <span className={`status ${detail.status}`} data-testid="delivery-status">
                  {detail.status}
                </span>
              </dd>
              <dt>Created</dt>
              <dd>{formatUtc(detail.createdAt)}</dd>
              <dt>Next attempt</dt>
              <dd>{formatUtc(detail.nextAttemptAt)}</dd>
              <dt>URL</dt>
              <dd>{detail.url ?? '—'}</dd>
              <dt>Id</dt>
              <dd>
                <code>{detail.id}</code>
              </dd>
            </dl>
            <div className="buttons">
              <Redeliver delivery={detail} />
              <button type="button" className="secondary" onClick={() => void delivery.refetch()}>
                Refresh
              </button>
            </div>
            <h2 id="attempts-heading">Attempts, newest first</h2>
            {detail.attempts.length === 0 ? <Empty>No attempt yet.</Empty> : <Timeline detail={detail} />}
            <h2>Payload</h2>
            <Json value={detail.payload} label="Payload" />
          </>
        )}
      </Loaded>
    </>
  );
}

/** One line per attempt, newest first; each unfolds to what was sent and what came back. */
function Timeline({ detail }: { detail: Detail }) {
  const rows = detail.attempts.map((attempt, index) => ({ attempt, index })).reverse();
  return (
    <ol className="timeline" reversed aria-labelledby="attempts-heading">
      {rows.map(({ attempt: a, index }) => {
        const number = index + 1;
        const ok = answered2xx(a);
        return (
          <li key={index} data-testid="attempt" data-at={a.at}>
            <details>
              <summary>
                <span className="visually-hidden">Attempt {number}: </span>
                <span className="when">{formatUtc(a.at)}</span>
                <span className={`code ${ok ? 'ok' : 'bad'}`}>{a.statusCode ?? 'no answer'}</span>
                <span className="took">{formatDuration(a.durationMs)}</span>
                <span className="next muted">{nextStep(detail, index)}</span>
                {!ok && answerText(a.error) && <span className="why">{answerText(a.error)}</span>}
              </summary>
              <AttemptExchange attempt={a} number={number} />
            </details>
          </li>
        );
      })}
    </ol>
  );
}

function AttemptExchange({ attempt: a, number }: { attempt: Attempt; number: number }) {
  if (!a.request) return <p className="muted">Nothing was sent (the endpoint was disabled or had no URL).</p>;
  return (
    <div className="exchange">
      <h3>Request</h3>
      <Json value={a.request} label={`Request of attempt ${number}`} />
      <h3>Response</h3>
      {a.response ? (
        <>
          <Json value={a.response.headers} label={`Response headers of attempt ${number}`} />
          <pre
            className="json"
            tabIndex={0}
            aria-label={`Response body of attempt ${number}`}
            data-testid="response-body"
          >
            {a.response.body || '(empty body)'}
          </pre>
        </>
      ) : (
        <p className="muted">No answer came.</p>
      )}
    </div>
  );
}
