import { useState } from 'react';
import { api, call } from '../api/client';
import type { Role } from '../api/session';
import { formatUtc } from '../dates';
import { Empty, Json, Loaded, useLoad } from '../ui';
import { OrderRef } from './Orders';

const PAGE_SIZE = 20;

/** What the list reads of an event; every other member is in its JSON. */
type Seen = { _eid: string; _type: string; _v: string; updatedAt?: unknown; jobApiId?: unknown; orderId?: unknown; result?: { orderId?: unknown } | null };
const text = (v: unknown) => (typeof v === 'string' && v ? v : null);
/** The event's own time: `updatedAt` of an order's event (1.3.0); the other events carry none, and show none. */
const timeOf = (e: Seen) => text(e.updatedAt);
/** The order it is about: `jobApiId` in a partner's events, `orderId` in a brand's (a command's result too). */
const orderOf = (e: Seen) => text(e.jobApiId) ?? text(e.orderId) ?? text(e.result?.orderId);

/**
 * The feed from the oldest retained event, a page at a time by `next`; each event opens to its JSON. The page is in the
 * address (`#/events/<after>`), so that the browser's back and forward move between pages, and a page left for another
 * one is where it was on return.
 */
export function Events({ after, role }: { after: string | undefined; role: Role }) {
  const [load] = useLoad(() => call(api.GET('/v3/events', { params: { query: { limit: PAGE_SIZE, ...(after && { after }) } } })), [after]);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <>
      <h1>Events</h1>
      <p className="muted">Every event of your endpoint, oldest first, exactly as delivered.</p>
      <Loaded load={load}>
        {(page) => page.items.length === 0
          ? <Empty>{after ? 'No newer events yet.' : 'No events yet.'}</Empty>
          : (
            <ul className="events">
              {page.items.map((event) => {
                const e = event as Seen;
                const expanded = open === e._eid;
                const [time, order] = [timeOf(e), orderOf(e)];
                return (
                  <li key={e._eid} data-testid="event">
                    <div className="event-line">
                      {time && <span className="when" data-testid="event-time">{formatUtc(time)}</span>}
                      <span className="type">{e._type}</span>
                      {order && <span className="order" data-testid="event-order">order <OrderRef id={order} role={role} /></span>}
                      <button type="button" className="link" aria-expanded={expanded} onClick={() => setOpen(expanded ? null : e._eid)}>
                        <span className="visually-hidden">Event </span><code title={e._eid}>{e._eid.slice(0, 8)}</code>
                        <span aria-hidden="true"> {expanded ? '▾' : '▸'} JSON</span>
                      </button>
                    </div>
                    {expanded && <Json value={event} label={`Event ${e._eid}`} />}
                  </li>
                );
              })}
            </ul>
          )}
      </Loaded>
      <nav className="pager" aria-label="Pages of events">
        <button type="button" className="secondary" disabled={!after} onClick={() => { window.location.hash = '#/events'; }}>From the start</button>
        <button type="button" className="secondary" disabled={load.state !== 'ok' || !load.data.next || load.data.items.length === 0}
          onClick={() => { if (load.state === 'ok' && load.data.next) window.location.hash = `#/events/${encodeURIComponent(load.data.next)}`; }}>Next</button>
      </nav>
    </>
  );
}
