import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, call } from '../api/client';
import type { operations } from '../api/schema';
import type { Role } from '../api/session';
import { UtcDateInput } from '../DateInput';
import { formatUtc, parseUtcInput, utcInputText } from '../dates';
import { answerText, Empty, Loaded, MutationProblem } from '../ui';
import { Redeliver, ShortId } from './delivery-parts';
import { OrderField, submittedOrder } from './OrderField';
import { OrderRef } from './Orders';
import { refreshWhileSettling } from './settling';

type Query = NonNullable<operations['webhookDeliveries-list']['parameters']['query']>;
type Page = operations['webhookDeliveries-list']['responses'][200]['content']['application/json'];
type Listed = Page['items'][number];
type Status = NonNullable<Query['status']>;
type EventType = NonNullable<Query['eventType']>;

const PAGE_SIZE = 20;
const STATUSES: Status[] = ['pending', 'delivered', 'failed'];
const EVENT_TYPES: EventType[] = ['OrderStatusEvent', 'InvoiceEvent', 'CommandResultEvent', 'CommandErrorEvent'];

/** The filters and the page as the address holds them (`#/deliveries?status=failed&orderId=…&before=…`). */
function useFilters() {
  const [params, setParams] = useSearchParams();
  const pick = <T extends string>(name: string, allowed?: readonly T[]) => {
    const value = params.get(name) ?? '';
    return (allowed && !allowed.includes(value as T) ? '' : value) as T | '';
  };
  const filters = {
    status: pick('status', STATUSES),
    eventType: pick('eventType', EVENT_TYPES),
    orderId: pick('orderId').trim(),
  };
  const before = pick('before');
  /** New filters start from the newest page; the previous address stays in the history for the back button. */
  const set = (next: Partial<typeof filters> & { before?: string }) => {
    const merged = { ...filters, before: '', ...next };
    setParams(Object.fromEntries(Object.entries(merged).filter(([, v]) => v)));
  };
  return { filters, before, set };
}

export function Deliveries({ role }: { role: Role }) {
  const { filters, before, set } = useFilters();
  const { status, eventType, orderId } = filters;
  const list = useQuery({
    queryKey: ['webhook-deliveries', 'list', filters, before],
    queryFn: () =>
      call(
        api.GET('/v3/webhook-deliveries', {
          params: {
            query: {
              limit: PAGE_SIZE,
              ...(status && { status }),
              ...(eventType && { eventType }),
              ...(orderId && { orderId }),
              ...(before && { before }),
            },
          },
        }),
      ),
    refetchInterval: (query) => refreshWhileSettling(query.state.data?.items ?? []),
  });
  const filtered = Boolean(status || eventType || orderId);

  return (
    <>
      <h1>Deliveries</h1>
      <form
        className="toolbar filters"
        aria-label="Filter deliveries"
        noValidate
        onSubmit={(e: FormEvent<HTMLFormElement>) => {
          e.preventDefault();
          set({ orderId: submittedOrder(e.currentTarget) });
        }}
      >
        <div className="field">
          <label htmlFor="status">Status</label>
          <select
            id="status"
            value={status}
            onChange={(e) => set({ status: e.target.value as Status | '', orderId: submittedOrder(e.target.form!) })}
          >
            <option value="">all</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="eventType">Event type</label>
          <select
            id="eventType"
            value={eventType}
            onChange={(e) =>
              set({ eventType: e.target.value as EventType | '', orderId: submittedOrder(e.target.form!) })
            }
          >
            <option value="">all</option>
            {EVENT_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
        <OrderField value={orderId} />
        <button type="submit">Filter</button>
        {filtered && (
          <button type="button" className="secondary" onClick={() => set({ status: '', eventType: '', orderId: '' })}>
            Clear filters
          </button>
        )}
        <button type="button" className="secondary" onClick={() => void list.refetch()}>
          Refresh
        </button>
      </form>
      <Loaded query={list}>
        {(page) =>
          page.items.length === 0 ? (
            <Empty>
              {before
                ? 'No more deliveries.'
                : filtered
                  ? 'No deliveries match these filters.'
                  : 'No deliveries yet: they appear here as your events are sent.'}
            </Empty>
          ) : (
            <table className="cards deliveries">
              <caption className="visually-hidden">Deliveries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Created (UTC)</th>
                  <th scope="col">Event</th>
                  <th scope="col">Order</th>
                  <th scope="col">Event id</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Next attempt</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((d) => (
                  <Row key={d.id} d={d} role={role} />
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <nav className="pager" aria-label="Pages of deliveries">
        <button type="button" className="secondary" disabled={!before} onClick={() => set({})}>
          Newest
        </button>
        <button
          type="button"
          className="secondary"
          disabled={!list.data?.next}
          onClick={() => {
            if (list.data?.next) set({ before: list.data.next });
          }}
        >
          Older
        </button>
      </nav>
      <RedeliverFailed />
    </>
  );
}

function Row({ d, role }: { d: Listed; role: Role }) {
  const last = d.attempts.at(-1);
  return (
    <tr>
      <td data-label="Created">
        <Link to={`/deliveries/${encodeURIComponent(d.id)}`} data-testid="delivery-link">
          {formatUtc(d.createdAt)}
        </Link>
      </td>
      <td data-label="Event">{d.eventType}</td>
      <td data-label="Order" data-testid="delivery-order">
        <OrderRef id={d.orderId} role={role} list="deliveries" />
      </td>
      <td data-label="Event id">
        <ShortId id={d.eventId} />
      </td>
      <td data-label="Status">
        <span className={`status ${d.status}`}>{d.status}</span>
        {last && !(last.statusCode !== null && last.statusCode < 300) && (
          <span className="answer muted" title={answerText(last.error) || undefined}>
            {last.statusCode ?? 'no answer'}
            {answerText(last.error) && `: ${answerText(last.error)}`}
          </span>
        )}
      </td>
      <td data-label="Attempts">{d.attempts.length}</td>
      <td data-label="Next attempt">{formatUtc(d.nextAttemptAt)}</td>
      <td data-label="Actions" className="actions">
        <Redeliver delivery={d} />
      </td>
    </tr>
  );
}

function RedeliverFailed() {
  const [since, setSince] = useState(() => utcInputText(new Date(Date.now() - 86_400_000)));
  const [checked, setChecked] = useState(false);
  const queries = useQueryClient();
  const again = useMutation({
    mutationFn: (at: string) => call(api.POST('/v3/webhook-deliveries/redeliver-failed', { body: { since: at } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['webhook-deliveries'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setChecked(true);
    const at = parseUtcInput(since);
    if (at === null) {
      document.getElementById('since')?.focus();
      return;
    }
    again.mutate(at);
  };
  const count = again.data?.count;
  return (
    <form onSubmit={submit} aria-labelledby="again-heading" noValidate>
      <h2 id="again-heading">Redeliver every failed delivery</h2>
      <UtcDateInput
        id="since"
        label="Created at or after (UTC)"
        value={since}
        onChange={setSince}
        required
        checked={checked}
      />
      <button type="submit" disabled={again.isPending}>
        Redeliver failed
      </button>
      {count !== undefined && !again.isPending && (
        <p role="status">{count === 1 ? '1 delivery is' : `${count} deliveries are`} pending again.</p>
      )}
      <MutationProblem mutation={again} />
    </form>
  );
}
