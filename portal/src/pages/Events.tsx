import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate, useParams, useSearchParams } from 'react-router';
import { api, call } from '../api/client';
import type { Role } from '../api/session';
import { formatUtc } from '../dates';
import { Empty, Json, Loaded } from '../ui';
import { OrderField, submittedOrder } from './OrderField';
import { OrderRef } from './Orders';

const PAGE_SIZE = 20;

/** What the list reads of an event; every other member is in its JSON. */
type Seen = {
  _eid: string;
  _type: string;
  _v: string;
  updatedAt?: unknown;
  jobApiId?: unknown;
  orderId?: unknown;
  result?: { orderId?: unknown } | null;
};
const text = (v: unknown) => (typeof v === 'string' && v ? v : null);
/** The event's own time: `updatedAt` of an order's event (1.3.0); the other events carry none, and show none. */
const timeOf = (e: Seen) => text(e.updatedAt);
/** The order it is about: `jobApiId` in a partner's events, `orderId` in a brand's (a command's result too). */
const orderOf = (e: Seen) => text(e.jobApiId) ?? text(e.orderId) ?? text(e.result?.orderId);

/**
 * The feed from the oldest retained event, a page at a time by `next`; each event opens to its JSON. The page and the
 * order filter are in the address (`#/events/<after>?orderId=…`), so that the browser's back and forward move between
 * pages, and a page left for another one is where it was on return.
 */
export function Events({ role }: { role: Role }) {
  const { after } = useParams();
  const [params] = useSearchParams();
  const orderId = (params.get('orderId') ?? '').trim();
  const navigate = useNavigate();
  const go = (cursor: string | undefined, order: string) =>
    navigate({
      pathname: cursor ? `/events/${encodeURIComponent(cursor)}` : '/events',
      search: order ? `?orderId=${encodeURIComponent(order)}` : '',
    });
  const feed = useQuery({
    queryKey: ['events', after ?? '', orderId],
    queryFn: () =>
      call(
        api.GET('/v3/events', {
          params: { query: { limit: PAGE_SIZE, ...(after && { after }), ...(orderId && { orderId }) } },
        }),
      ),
  });
  const [open, setOpen] = useState<string | null>(null);
  return (
    <>
      <h1>Events</h1>
      <p className="muted">Every event of your endpoint, oldest first, exactly as delivered.</p>
      <form
        className="toolbar filters"
        aria-label="Filter events"
        noValidate
        onSubmit={(e: FormEvent<HTMLFormElement>) => {
          e.preventDefault();
          go(undefined, submittedOrder(e.currentTarget));
        }}
      >
        <OrderField value={orderId} />
        <button type="submit">Filter</button>
        {orderId && (
          <button type="button" className="secondary" onClick={() => go(undefined, '')}>
            All orders
          </button>
        )}
      </form>
      <Loaded query={feed}>
        {(page) =>
          page.items.length === 0 ? (
            <Empty>
              {after ? 'No newer events yet.' : orderId ? `No events of order ${orderId}.` : 'No events yet.'}
            </Empty>
          ) : (
            <ul className="events">
              {page.items.map((event) => {
                const e = event as Seen;
                const expanded = open === e._eid;
                const [time, order] = [timeOf(e), orderOf(e)];
                return (
                  <li key={e._eid} data-testid="event">
                    <div className="event-line">
                      {time && (
                        <span className="when" data-testid="event-time">
                          {formatUtc(time)}
                        </span>
                      )}
                      <span className="type">{e._type}</span>
                      {order && (
                        <span className="order" data-testid="event-order">
                          order <OrderRef id={order} role={role} list="events" />
                        </span>
                      )}
                      <button
                        type="button"
                        className="link"
                        aria-expanded={expanded}
                        onClick={() => setOpen(expanded ? null : e._eid)}
                      >
                        <span className="visually-hidden">Event </span>
                        <code title={e._eid}>{e._eid.slice(0, 8)}</code>
                        <span aria-hidden="true"> {expanded ? '▾' : '▸'} JSON</span>
                      </button>
                    </div>
                    {expanded && <Json value={event} label={`Event ${e._eid}`} />}
                  </li>
                );
              })}
            </ul>
          )
        }
      </Loaded>
      <nav className="pager" aria-label="Pages of events">
        <button type="button" className="secondary" disabled={!after} onClick={() => go(undefined, orderId)}>
          From the start
        </button>
        <button
          type="button"
          className="secondary"
          disabled={!feed.data?.next || feed.data.items.length === 0}
          onClick={() => {
            if (feed.data?.next) go(feed.data.next, orderId);
          }}
        >
          Next
        </button>
      </nav>
    </>
  );
}
