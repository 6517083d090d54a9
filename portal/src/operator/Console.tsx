import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useState } from 'react';
import { createHashRouter, Navigate, NavLink, Outlet, RouterProvider } from 'react-router';
import type { Problem } from '../api/session';
import { type Handle, SkipLink, usePageChange } from '../page-frame';
import { AccountDetail, Accounts } from './pages/Accounts';
import { Deliveries, DeliveryDetail } from './pages/Deliveries';
import { Endpoints } from './pages/Endpoints';
import { Gauges } from './pages/Gauges';
import { Commands, Jobs } from './pages/Lookups';
import { type Admin, adminClient, call, forgetToken, storedToken, storeToken } from './trpc';

const AdminContext = createContext<Admin | null>(null);

/** The signed-in session's client of the admin procedures. */
export function useAdmin(): Admin {
  const admin = useContext(AdminContext);
  if (!admin) throw new Error('useAdmin outside a signed-in console');
  return admin;
}

type Session = { token: string } | { token: null; message: string };

export function Console() {
  const [session, setSession] = useState<Session>(() => {
    const token = storedToken();
    return token ? { token } : { token: null, message: '' };
  });
  const signOut = (message: string) => {
    forgetToken();
    setSession({ token: null, message });
  };
  if (session.token === null)
    return (
      <SignIn
        message={session.message}
        onSignedIn={(token) => {
          storeToken(token);
          setSession({ token });
        }}
      />
    );
  return <SignedIn key={session.token} token={session.token} signOut={signOut} />;
}

function SignIn({ message, onSignedIn }: { message: string; onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [refusal, setRefusal] = useState(message);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    document.title = 'Sign in · Operator console';
  }, []);
  const submit = async () => {
    setBusy(true);
    try {
      // Checked before it is kept, by a read of one row (the gauges would ask every process of a cluster): a token
      // the service refuses is never stored.
      await call(adminClient(token, () => {}).webhookConfigs.list.query({ limit: 1 }));
      onSignedIn(token);
    } catch (error) {
      const problem = error as Partial<Problem>; // call()'s problem, or a failure of the page's own (no status)
      setRefusal(
        problem.status === 401
          ? 'This token was refused: it is not the service’s ADMIN_TOKEN (or none is set). Nothing was signed in.'
          : (problem.detail ?? 'The service could not be reached.'),
      );
      setBusy(false);
    }
  };
  return (
    <main className="narrow" id="main">
      <h1>Operator console</h1>
      <p>Sign in with the service’s admin token. It is kept in this tab only, until you sign out or close it.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <label htmlFor="admin-token">Admin token</label>
        <input
          id="admin-token"
          type="password"
          autoComplete="off"
          required
          value={token}
          onChange={(e) => setToken(e.target.value)}
          aria-describedby={refusal ? 'sign-in-refusal' : undefined}
        />
        <div>
          <button type="submit" disabled={busy || token === ''}>
            Sign in
          </button>
        </div>
      </form>
      {refusal && (
        <div className="problem" role="alert" id="sign-in-refusal">
          <p>{refusal}</p>
        </div>
      )}
    </main>
  );
}

const PAGES = [
  { path: 'accounts', label: 'Accounts' },
  { path: 'endpoints', label: 'Endpoints' },
  { path: 'deliveries', label: 'Deliveries' },
  { path: 'commands', label: 'Commands' },
  { path: 'jobs', label: 'Jobs' },
  { path: 'gauges', label: 'Gauges' },
];

function SignedIn({ token, signOut }: { token: string; signOut: (message: string) => void }) {
  const [admin] = useState(() =>
    adminClient(token, () => signOut('The service no longer accepts this token: sign in again.')),
  );
  const [client] = useState(
    () =>
      new QueryClient({
        // Asked even when the browser says it is offline: see the portal's query.ts.
        defaultOptions: {
          queries: { retry: false, staleTime: 0, refetchOnReconnect: true, networkMode: 'always' },
          mutations: { retry: false, networkMode: 'always' },
        },
      }),
  );
  const [router] = useState(() => {
    const page = (path: string, element: React.ReactNode, label: string) => ({
      path,
      element,
      handle: { label } satisfies Handle,
    });
    return createHashRouter([
      {
        path: '/',
        element: <Layout signOut={() => signOut('Signed out.')} />,
        children: [
          { index: true, element: <Navigate to="/accounts" replace /> },
          page('accounts', <Accounts />, 'Accounts'),
          page('accounts/:id', <AccountDetail />, 'Account'),
          page('endpoints', <Endpoints />, 'Endpoints'),
          page('deliveries', <Deliveries />, 'Deliveries'),
          page('deliveries/:id', <DeliveryDetail />, 'Delivery'),
          page('commands', <Commands />, 'Commands'),
          page('jobs', <Jobs />, 'Jobs'),
          page('gauges', <Gauges />, 'Gauges'),
          { path: '*', element: <Navigate to="/accounts" replace /> },
        ],
      },
    ]);
  });
  useEffect(() => () => router.dispose(), [router]);
  return (
    <AdminContext.Provider value={admin}>
      <QueryClientProvider client={client}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </AdminContext.Provider>
  );
}

function Layout({ signOut }: { signOut: () => void }) {
  usePageChange('Operator console');
  return (
    <>
      <SkipLink />
      <header className="bar">
        <span className="brand">Operator console</span>
        <nav aria-label="Pages">
          <ul>
            {PAGES.map((p) => (
              <li key={p.path}>
                <NavLink to={`/${p.path}`}>{p.label}</NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" className="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
}
