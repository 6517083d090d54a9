import { useState } from 'react';
import { api, call } from '../api/client';
import { Empty, Json, Loaded, useLoad } from '../ui';

const PAGE_SIZE = 20;

/**
 * The feed from the oldest retained event, a page at a time by `next`; each event opens to its JSON. The page is in the
 * address (`#/events/<after>`), so that the browser's back and forward move between pages, and a page left for another
 * one is where it was on return.
 */
export function Events({ after }: { after: string | undefined }) {
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
                const e = event as { _eid: string; _type: string; _v: string };
                const expanded = open === e._eid;
                return (
                  <li key={e._eid}>
                    <button type="button" className="link" aria-expanded={expanded} onClick={() => setOpen(expanded ? null : e._eid)}>
                      {e._type} <code>{e._eid}</code>
                    </button>
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
