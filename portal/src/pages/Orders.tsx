import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { api, call } from '../api/client';
import type { Role } from '../api/session';
import { UtcDateInput } from '../DateInput';
import { formatUtc, parseUtcInput } from '../dates';
import { Empty, Json, Loaded } from '../ui';

const PAGE_SIZE = 20;

/** The listing's filters, as the address has them (keyed by it: back and forward show what they applied). */
function OrderFilters({
  active: initialActive,
  since: initialSince,
  onApply,
}: {
  active: boolean;
  since: string;
  onApply: (filters: { active: boolean; since: string }) => void;
}) {
  const [active, setActive] = useState(initialActive);
  const [since, setSince] = useState(initialSince);
  const [checked, setChecked] = useState(false);
  const apply = (e: FormEvent) => {
    e.preventDefault();
    setChecked(true);
    const updatedSince = since.trim() ? parseUtcInput(since) : '';
    if (updatedSince === null) {
      document.getElementById('updatedSince')?.focus();
      return;
    }
    onApply({ active, since: updatedSince });
  };
  return (
    <form className="toolbar" onSubmit={apply} aria-label="Filter orders" noValidate>
      <div className="check">
        <input id="active" type="checkbox" checked={active} onChange={(e) => setActive(e.target.checked)} />
        <label htmlFor="active">Only orders needing action</label>
      </div>
      <UtcDateInput id="updatedSince" label="Updated since (UTC)" value={since} onChange={setSince} checked={checked} />
      <button type="submit">Apply</button>
    </form>
  );
}

/**
 * The partner's paginated listing, with `active` and `updatedSince`; the page and the filters are in the address
 * (`#/orders?page=2&active=true&updatedSince=…`), so that back and forward move between them and a reload keeps them.
 */
export function Orders() {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Math.floor(Number(params.get('page'))) || 1);
  const active = params.get('active') === 'true';
  const since = parseUtcInput(params.get('updatedSince') ?? '') ?? '';
  const go = (next: { page?: number; active?: boolean; since?: string }) => {
    const merged = { page, active, since, ...next };
    setParams(
      Object.fromEntries([
        ...(merged.page > 1 ? [['page', String(merged.page)]] : []),
        ...(merged.active ? [['active', 'true']] : []),
        ...(merged.since ? [['updatedSince', merged.since]] : []),
      ]),
    );
  };
  const list = useQuery({
    queryKey: ['partner-orders', page, active, since],
    queryFn: () =>
      call(
        api.GET('/v3/partner-orders/paginated', {
          params: {
            query: {
              page,
              pageSize: PAGE_SIZE,
              ...(active && { active: true }),
              ...(since && { updatedSince: since }),
            },
          },
        }),
      ),
  });
  return (
    <>
      <h1>Orders</h1>
      <OrderFilters
        key={params.toString()}
        active={active}
        since={since ? formatUtc(since) : ''}
        onApply={(next) => go({ page: 1, ...next })}
      />
      <Loaded query={list}>
        {(answer) => {
          const items = answer.items as {
            jobApiId: string;
            gidOrderNumber?: string | null;
            status: string;
            updatedAt: string;
          }[];
          const pages = Math.max(1, Math.ceil(answer.total / answer.pageSize));
          return (
            <>
              {items.length === 0 ? (
                <Empty>No orders match.</Empty>
              ) : (
                <table className="cards">
                  <caption className="visually-hidden">
                    Orders, page {answer.page} of {pages}
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Order</th>
                      <th scope="col">Number</th>
                      <th scope="col">Status</th>
                      <th scope="col">Updated</th>
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((o) => (
                      <tr key={o.jobApiId}>
                        <td data-label="Order">
                          <Link to={`/orders/${encodeURIComponent(o.jobApiId)}`}>{o.jobApiId}</Link>
                        </td>
                        <td data-label="Number">{o.gidOrderNumber ?? '—'}</td>
                        <td data-label="Status">{o.status}</td>
                        <td data-label="Updated">{formatUtc(o.updatedAt)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              <nav className="pager" aria-label="Pages of orders">
                <button type="button" className="secondary" disabled={page <= 1} onClick={() => go({ page: page - 1 })}>
                  Previous
                </button>
                <span>
                  Page {answer.page} of {pages} ({answer.total} orders)
                </span>
                <button
                  type="button"
                  className="secondary"
                  disabled={page >= pages}
                  onClick={() => go({ page: page + 1 })}
                >
                  Next
                </button>
              </nav>
            </>
          );
        }}
      </Loaded>
    </>
  );
}

/**
 * One order as the single-order poll shows it, in the endpoint's configured version, with its events and deliveries.
 */
export function OrderDetail() {
  const id = useParams().id!;
  const order = useQuery({
    queryKey: ['partner-orders', 'one', id],
    queryFn: () =>
      call(api.GET('/v3/poll/job/{version}/{orderId}', { params: { path: { version: '*', orderId: id } } })),
  });
  const filter = `?orderId=${encodeURIComponent(id)}`;
  return (
    <>
      <p>
        <Link to="/orders">← All orders</Link>
      </p>
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
  const to =
    role === 'brand'
      ? { pathname: `/${list}`, search: `?orderId=${encodeURIComponent(id)}` }
      : `/orders/${encodeURIComponent(id)}`;
  return (
    <Link to={to} data-testid="order-link" className="id">
      {id}
    </Link>
  );
}
