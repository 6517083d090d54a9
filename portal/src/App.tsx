import { useEffect, useState, type FormEvent } from 'react';
import { api, call } from './api/client';
import { accessToken, onSignedOut, refreshToken, signIn, signOut, SignedOut, takeTokenFromAddress, type Role } from './api/session';
import { Commands } from './pages/Commands';
import { Deliveries, DeliveryDetail } from './pages/Deliveries';
import { Endpoint } from './pages/Endpoint';
import { Events } from './pages/Events';
import { OrderDetail, Orders } from './pages/Orders';
import { ProblemBox, useAction } from './ui';

/** The route is the address's fragment: `#/deliveries/<id>`. */
function useRoute(): string[] {
  const read = () => window.location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const listener = () => setRoute(read());
    window.addEventListener('hashchange', listener);
    return () => window.removeEventListener('hashchange', listener);
  }, []);
  return route;
}

type Session = { state: 'out'; message: string } | { state: 'checking' } | { state: 'in'; role: Role };

export function App() {
  const [session, setSession] = useState<Session>(() => (refreshToken() ? { state: 'checking' } : { state: 'out', message: '' }));
  useEffect(() => onSignedOut((message) => setSession({ state: 'out', message })), []);
  // A sign-in link opened in a tab that already shows the portal changes only the fragment.
  useEffect(() => {
    const listener = () => { if (takeTokenFromAddress()) setSession({ state: 'checking' }); };
    window.addEventListener('hashchange', listener);
    return () => window.removeEventListener('hashchange', listener);
  }, []);
  useEffect(() => {
    if (session.state !== 'checking') return;
    accessToken().then(
      ({ role }) => setSession({ state: 'in', role }),
      (error: unknown) => { if (!(error instanceof SignedOut)) setSession({ state: 'out', message: 'The service could not be reached; try again.' }); },
    );
  }, [session.state]);

  if (session.state === 'out') return <SignIn message={session.message} onSignedIn={() => setSession({ state: 'checking' })} />;
  if (session.state === 'checking') return <main className="narrow"><p role="status">Signing in…</p></main>;
  return <Portal role={session.role} />;
}

const PAGES: { path: string; label: string; roles: Role[] }[] = [
  { path: 'endpoint', label: 'Endpoint', roles: ['partner', 'brand'] },
  { path: 'deliveries', label: 'Deliveries', roles: ['partner', 'brand'] },
  { path: 'events', label: 'Events', roles: ['partner', 'brand'] },
  { path: 'orders', label: 'Orders', roles: ['partner'] },
  { path: 'commands', label: 'Commands', roles: ['brand'] },
];

function Portal({ role }: { role: Role }) {
  const [page = 'endpoint', id] = useRoute();
  const pages = PAGES.filter((p) => p.roles.includes(role));
  const current = pages.find((p) => p.path === page) ?? pages[0]!;
  useEffect(() => { document.title = `${current.label} · Integrator portal`; }, [current.label]);
  return (
    <>
      <a className="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to content</a>
      <header className="bar">
        <span className="brand">Integrator portal <span className="muted">({role})</span></span>
        <nav aria-label="Pages">
          <ul>
            {pages.map((p) => (
              <li key={p.path}><a href={`#/${p.path}`} aria-current={p.path === current.path ? 'page' : undefined}>{p.label}</a></li>
            ))}
          </ul>
        </nav>
        <button type="button" className="secondary" onClick={() => { window.location.hash = ''; signOut(''); }}>Sign out</button>
      </header>
      <main id="main" tabIndex={-1}>
        {current.path === 'endpoint' && <Endpoint />}
        {current.path === 'deliveries' && (id ? <DeliveryDetail id={id} /> : <Deliveries />)}
        {current.path === 'events' && <Events key={id ?? ''} after={id} />}
        {current.path === 'orders' && (id ? <OrderDetail id={id} /> : <Orders />)}
        {current.path === 'commands' && <Commands initial={id ?? ''} />}
      </main>
    </>
  );
}

function SignIn({ message, onSignedIn }: { message: string; onSignedIn: () => void }) {
  const [email, setEmail] = useState('');
  const [token, setToken] = useState('');
  const [sent, setSent] = useState('');
  const login = useAction();
  useEffect(() => { document.title = 'Sign in · Integrator portal'; }, []);

  const requestMail = (e: FormEvent) => {
    e.preventDefault();
    void login.run(async () => {
      const answer = await call(api.POST('/v3/auth/login', { body: { email } }));
      setSent(answer.status);
    });
  };
  const useToken = (e: FormEvent) => {
    e.preventDefault();
    signIn(token);
    onSignedIn();
  };
  return (
    <main className="narrow" id="main">
      <h1>Sign in to the integrator portal</h1>
      {message && <div className="problem" role="alert"><p>{message}</p><p>Ask for a new sign-in link below.</p></div>}
      <p>We e-mail a sign-in link to contacts with API access. It is valid for 24 hours; closing this tab signs you out.</p>
      <form onSubmit={requestMail} aria-labelledby="mail-heading">
        <h2 id="mail-heading">Get a sign-in link</h2>
        <label htmlFor="email">E-mail address</label>
        <input id="email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <button type="submit" disabled={login.busy}>Send me a link</button>
        {sent && <p role="status">{sent}</p>}
        {login.problem && <ProblemBox problem={login.problem} />}
      </form>
      <form onSubmit={useToken} aria-labelledby="token-heading">
        <h2 id="token-heading">Or paste the token from the mail</h2>
        <label htmlFor="token">Refresh token</label>
        <input id="token" type="password" autoComplete="off" required value={token} onChange={(e) => setToken(e.target.value)} />
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
