import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { api, call } from '../api/client';
import type { Role } from '../api/session';
import { Empty, Json, Loaded } from '../ui';
import { formatUtc, parseUtcInput } from '../dates';
import { UtcDateInput } from '../DateInput';

const PAGE_SIZE = 20;

/** The partner's paginated listing, with `active` and `updatedSince`. */
export function Orders() {
  const [page, setPage] = useState(1);
  const [active, setActive] = useState(false);
  const [since, setSince] = useState('');
  const [filters, setFilters] = useState({ active: false, since: '' });
  const [checked, setChecked] = useState(false);
  const list = useQuery({
    queryKey: ['partner-orders', page, filters],
    queryFn: () => call(api.GET('/v3/partner-orders/paginated', {
      params: { query: {
        page, pageSize: PAGE_SIZE,
        ...(filters.active && { active: true }),
        ...(filters.since && { updatedSince: filters.since }),
      } },
    })),
  });
  const apply = (e: FormEvent) => {
    e.preventDefault();
    setChecked(true);
    const updatedSince = since.trim() ? parseUtcInput(since) : '';
    if (updatedSince === null) { document.getElementById('updatedSince')?.focus(); return; }
    setPage(1);
    setFilters({ active, since: updatedSince });
  };
  return (
    <>
      <h1>Orders</h1>
      <form className="toolbar" onSubmit={apply} aria-label="Filter orders" noValidate>
        <div className="check">
          <input id="active" type="checkbox" checked={active} onChange={(e) => setActive(e.target.checked)} />
          <label htmlFor="active">Only orders needing action</label>
        </div>
        <UtcDateInput id="updatedSince" label="Updated since (UTC)" value={since} onChange={setSince} checked={checked} />
        <button type="submit">Apply</button>
      </form>
      <Loaded query={list}>
        {(answer) => {
          const items = answer.items as { jobApiId: string; gidOrderNumber?: string | null; status: string; updatedAt: string }[];
          const pages = Math.max(1, Math.ceil(answer.total / answer.pageSize));
          return (
            <>
              {items.length === 0 ? <Empty>No orders match.</Empty> : (
                <table className="cards">
                  <caption className="visually-hidden">Orders, page {answer.page} of {pages}</caption>
                  <thead><tr><th scope="col">Order</th><th scope="col">Number</th><th scope="col">Status</th><th scope="col">Updated</th></tr></thead>
                  <tbody>
                    {items.map((o) => (
                      <tr key={o.jobApiId}>
                        <td data-label="Order"><Link to={`/orders/${encodeURIComponent(o.jobApiId)}`}>{o.jobApiId}</Link></td>
                        <td data-label="Number">{o.gidOrderNumber ?? '—'}</td>
                        <td data-label="Status">{o.status}</td>
                        <td data-label="Updated">{formatUtc(o.updatedAt)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              <nav className="pager" aria-label="Pages of orders">
                <button type="button" className="secondary" disabled={page <= 1} onClick={() => setPage(page - 1)}>Previous</button>
                <span>Page {answer.page} of {pages} ({answer.total} orders)</span>
                <button type="button" className="secondary" disabled={page >= pages} onClick={() => setPage(page + 1)}>Next</button>
              </nav>
            </>
          );
        }}
      </Loaded>
    </>
  );
}

/** One order as the single-order poll shows it, in the endpoint's configured version, with its events and deliveries. */
export function OrderDetail() {
  const id = useParams().id!;
  const order = useQuery({
    queryKey: ['partner-orders', 'one', id],
    queryFn: () => call(api.GET('/v3/poll/job/{version}/{orderId}', { params: { path: { version: '*', orderId: id } } })),
  });
  const filter = `?orderId=${encodeURIComponent(id)}`;
  return (
    <>
      <p><Link to="/orders">← All orders</Link></p>
      <h1>Order {id}</h1>
      <p className="buttons">
        <Link to={{ pathname: '/events', search: filter }}>Its events</Link>
        <Link to={{ pathname: '/deliveries', search: filter }}>Its deliveries</Link>
      </p>
      <Loaded query={order}>{(answer) => <Json value={answer} label={`Order ${id}`} />}</Loaded>
    </>
  );
}

/**
 * An order named in an event or a delivery: a partner opens it on its Orders page; a brand has no order page in the
 * portal (the brand API has no order read), so its order opens the list it is on, filtered to that order.
 */
export function OrderRef({ id, role, list }: { id: string | null; role: Role; list: 'events' | 'deliveries' }) {
  if (!id) return <>—</>;
  const to = role === 'brand' ? { pathname: `/${list}`, search: `?orderId=${encodeURIComponent(id)}` } : `/orders/${encodeURIComponent(id)}`;
  return <Link to={to} data-testid="order-link" className="id">{id}</Link>;
}
