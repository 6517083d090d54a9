import { Navigate, NavLink, Outlet, type RouteObject, ScrollRestoration } from 'react-router';
import { type Identity, type Role, signOut } from './api/session';
import { Who } from './identity';
import { type Handle, SkipLink, usePageChange } from './page-frame';
import { Commands } from './pages/Commands';
import { Deliveries } from './pages/Deliveries';
import { DeliveryDetail } from './pages/Delivery';
import { Endpoint } from './pages/Endpoint';
import { Events } from './pages/Events';
import { OrderDetail, Orders } from './pages/Orders';

// The portal's pages, in the address's fragment (`#/deliveries?status=failed`): the service serves one file at
// /portal/, and a sign-in link's `#refresh=` never reaches the server either.

type Page = { path: string; label: string; roles: Role[] };
const PAGES: Page[] = [
  { path: 'endpoint', label: 'Endpoint', roles: ['partner', 'brand'] },
  { path: 'deliveries', label: 'Deliveries', roles: ['partner', 'brand'] },
  { path: 'events', label: 'Events', roles: ['partner', 'brand'] },
  { path: 'orders', label: 'Orders', roles: ['partner'] },
  { path: 'commands', label: 'Commands', roles: ['brand'] },
];

/** A line above the first page of a session: what the sign-in did (an alert when a link was refused). */
export type Notice = { text: string; alert: boolean };

export function portalRoutes(who: Identity, notice?: Notice): RouteObject[] {
  const { role } = who;
  const page = (path: string, element: React.ReactNode, label: string): RouteObject => ({
    path,
    element,
    handle: { label } satisfies Handle,
  });
  const mine = (path: string) => PAGES.some((p) => p.path === path && p.roles.includes(role));
  return [
    {
      path: '/',
      element: <Layout who={who} notice={notice} />,
      children: [
        { index: true, element: <Navigate to="/endpoint" replace /> },
        page('endpoint', <Endpoint />, 'Endpoint'),
        page('deliveries', <Deliveries role={role} />, 'Deliveries'),
        page('deliveries/:id', <DeliveryDetail role={role} />, 'Delivery'),
        page('events/:after?', <Events role={role} />, 'Events'),
        ...(mine('orders') ? [page('orders', <Orders />, 'Orders'), page('orders/:id', <OrderDetail />, 'Order')] : []),
        ...(mine('commands') ? [page('commands/:cid?', <Commands />, 'Commands')] : []),
        // Another role's page, an old address, or what a sign-in link left behind: the Endpoint page.
        { path: '*', element: <Navigate to="/endpoint" replace /> },
      ],
    },
  ];
}

function Layout({ who, notice }: { who: Identity; notice?: Notice }) {
  const pages = PAGES.filter((p) => p.roles.includes(who.role));
  usePageChange('Integrator portal');
  return (
    <>
      <SkipLink />
      <header className="bar">
        <span className="brand">Integrator portal</span>
        <Who who={who} />
        <nav aria-label="Pages">
          <ul>
            {pages.map((p) => (
              <li key={p.path}>
                <NavLink to={`/${p.path}`}>{p.label}</NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            window.location.hash = '';
            signOut('');
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {notice && (
          <p className={notice.alert ? 'problem' : 'notice'} role={notice.alert ? 'alert' : 'status'}>
            {notice.text}
          </p>
        )}
        <Outlet />
      </main>
      <ScrollRestoration />
    </>
  );
}
